"""What a music request asks for, read from Chinese or English text without an LLM.

`read_intent("帮我播放周杰伦的歌")` → play "周杰伦" (search, then start the first match);
`read_intent("搜索周杰伦")` → search only; `read_intent("播放")` → play with no term
(resume, or start the library);
`read_intent("帮我下载周杰伦的七里香到本地")` → download "七里香" by "周杰伦";
"下一首" / "pause" / "我的音乐" → playback control or the local library. Anything
else that names something is searched for; a search that describes a wish rather
than naming an artist or a song ("来点适合跑步的歌", "something relaxing for
studying") is marked `free_form`, so the app may let the LLM turn it into a
catalogue search term (its words themselves are the query otherwise). Pure
functions: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["MusicIntent", "asks_more", "has_cjk", "is_free_form", "read_intent"]

IntentKind = Literal[
    "home",
    "search",
    "play",
    "download",
    "pause",
    "resume",
    "next",
    "prev",
    "library",
    "recent",
]


@dataclass(frozen=True)
class MusicIntent:
    kind: IntentKind
    query: str = ""  # search, play: the term; download: the catalogue search term
    title: str = ""  # download (and a play naming one): the song's title
    artist: str = ""  # download: the artist, when named
    english: bool = False
    label: str = ""  # search: how to name the results ("周杰伦"); defaults to `query`
    free_form: bool = False  # search: a wish ("适合跑步的歌"), not a name
    request: str = ""  # free_form: the request as the user said it

    @property
    def shown(self) -> str:
        return self.label or self.query


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text or ""))


_TRAILING_PUNCT = " \t\r\n。.!！?？~～,，;；"
_QUOTES = '《》“”"「」『』【】'

_CONTROL_ZH: list[tuple[IntentKind, re.Pattern[str]]] = [
    (
        "next",
        re.compile(
            r"^(请|帮我)?(播放|放|切到|换到|切换到)?(下一首|下一曲|下首)(歌)?$|^切歌$"
        ),
    ),
    (
        "prev",
        re.compile(r"^(请|帮我)?(播放|放|切到|换到|切换到)?(上一首|上一曲|上首)(歌)?$"),
    ),
    (
        "pause",
        re.compile(
            r"^(请|帮我)?(暂停|暂停播放|停一下|停止播放|别放了|先停一下)(音乐|歌曲|一下)?$"
        ),
    ),
    (
        "resume",
        re.compile(r"^(请|帮我)?(继续|继续播放|恢复播放|接着放|接着播放)(音乐|歌曲)?$"),
    ),
    ("recent", re.compile(r"(最近播放|播放记录|播放历史|最近听过|听过的歌)")),
    (
        "library",
        re.compile(
            r"(本地音乐|本地曲库|本地歌曲|我的音乐|我的曲库|我的歌曲|曲库|已下载的歌|下载的歌曲)"
        ),
    ),
]

_CONTROL_EN: list[tuple[IntentKind, re.Pattern[str]]] = [
    ("next", re.compile(r"^(play )?(the )?(next|skip)( track| song| one)?( please)?$")),
    (
        "prev",
        re.compile(r"^(play )?(the )?(previous|prev|last)( track| song| one)?( please)?$"),
    ),
    (
        "pause",
        re.compile(r"^(pause|stop)( the)?( music| song| playback| playing)?( please)?$"),
    ),
    ("resume", re.compile(r"^(resume|continue|unpause)( the)?( music| song| playback)?$")),
    ("recent", re.compile(r"\b(recently played|recent songs|play history|history)\b")),
    (
        "library",
        re.compile(
            r"\b(my music|local music|my library|music library|my songs|downloaded songs)\b"
        ),
    ),
]

_OPEN_APP = re.compile(
    r"^(请|帮我)?(打开|启动|开启|进入|open|launch|start)\s*(the\s+)?"
    r"(音乐|music)\s*(应用|播放器|app|player)?\s*(窗口|window)?$"
    # a question about the app itself ("介绍一下音乐应用", "tell me about the music app")
    r"|^(请|帮我|给我)?(介绍|说说|讲讲|谈谈|聊聊)(一下|下)?\s*(音乐|music)\s*(应用|播放器|app)$"
    r"|^(please\s+)?(tell\s+(me|us)\s+about|describe|talk\s+about)\s+(the\s+)?"
    r"music\s+(app|player)$"
)
_ZH_PREFIX = re.compile(
    r"^(请你|请|麻烦你?|帮我|给我|替我|帮忙|我想要|我想|我要|想要|想|要|再|来|也)*"
    r"(播放一下|播放|放一首|放一下|放点|放|来一首|来点|来首|听一下|听听|听|搜索一下|搜索|搜一下|搜|"
    r"查找|查一下|查|找一下|找找|找|推荐)?"
    r"(一些|一首|几首|一点|点|首)?"
)
_ZH_SUFFIX = re.compile(
    r"(的)?(所有|全部|热门|经典|最火|好听)?(的)?(歌曲|歌|音乐|专辑|作品|曲子|单曲)?"
    r"(吧|好吗|可以吗|一下|呗|呀|啊)?$"
)
_EN_PREFIX = re.compile(
    r"^(?:(?:please|can you|could you|i want to|i'd like to|let's|lets)\s+)*"
    r"(?:(?:play|listen to|search for|search|find|look for|put on|queue)(?:\s+|$))?"
    r"(?:me\s+)?(?:(?:some|a few|the|a)(?:\s+|$))?"
    r"(?:(?:songs|song|music|tracks|track)(?:\s+|$))?(?:(?:by|of|from)\s+)?"
)
# a request to hear something (rather than to look for it): the song starts
_PLAY_ZH = re.compile(
    r"^(请你|请|麻烦你?|帮我|给我|替我|帮忙|我想要|我想|我要|想要|想|要|再|也)*"
    r"(播放|放一首|放一下|放点|放|来一首|来点|来首|听一下|听听|听)"
)
_PLAY_EN = re.compile(
    r"^(?:(?:please|can you|could you|i want to|i'd like to|let's|lets)\s+)*"
    r"(?:play|listen to|put on|queue)\b"
)
_EN_SUFFIX = re.compile(r"\s*('s)?\s*(songs|song|music|tracks)?\s*(please)?$")
_GENERIC = {
    "",
    "音乐",
    "歌",
    "歌曲",
    "首歌",
    "一首歌",
    "music",
    "songs",
    "some music",
    "something",
}

_DOWNLOAD_ZH = re.compile(
    r"下载(一下|一首)?(歌曲|歌)?(?P<what>.+?)(到本地|到电脑|到本机|到硬盘|到工作区|到workspace|到我的电脑|下来|吧)*$"
)
_DOWNLOAD_EN = re.compile(
    r"download\s+(the\s+)?(song\s+|track\s+)?(?P<what>.+?)"
    r"(\s+to\s+(my\s+)?(local|computer|disk|library|workspace))?$"
)


# Words that describe a wish (an activity, a mood, a likeness) rather than a name.
_FREE_FORM_ZH = re.compile(
    r"适合|适于|用来|时候|时听|听的|心情|氛围|风格|感觉|节奏|让人|让我|助眠|学习|跑步|"
    r"运动|健身|睡觉|睡前|放松|安静|轻松|欢快|开心|快乐|伤感|悲伤|难过|浪漫|治愈|励志|"
    r"提神|派对|开车|工作时|读书|专注|类似|那种|一样的"
)
_FREE_FORM_EN = re.compile(
    r"\b(for|while|when|something|anything|relaxing|relax|calm|chill|chilled|upbeat|"
    r"happy|sad|mood|vibes?|like|similar|study|studying|running|workout|gym|sleep|"
    r"sleeping|focus|party|driving|romantic|energetic|background)\b",
    re.I,
)


def is_free_form(term: str) -> bool:
    """Whether a search term describes a wish rather than naming an artist or song."""
    if has_cjk(term):
        return bool(_FREE_FORM_ZH.search(term))
    return bool(_FREE_FORM_EN.search(term))


# a question or a chain of requests: more than a name to search or to play
_MORE_ZH = re.compile(r"哪|几|多少|什么|怎么|为什么|是不是|吗|呢|然后|之后|接着|并且|[?？]")
_MORE_EN = re.compile(
    r"\b(which|what|how|why|who|when|then|and (play|download|add|save|list))\b|\?", re.I
)


def asks_more(term: str) -> bool:
    """Whether a search term the rules read is a question or a chain of requests
    ("七里香是哪年发行的", "Adele and play the second one"), which no search answers."""
    return bool((_MORE_ZH if has_cjk(term) else _MORE_EN).search(term))


def _clean(text: str) -> str:
    text = (text or "").strip().strip(_TRAILING_PUNCT).strip()
    for quote in _QUOTES:
        text = text.replace(quote, " ")
    return re.sub(r"\s+", " ", text).strip()


def _search_term_zh(text: str) -> str:
    body = text.replace(" ", "") if not re.search(r"[A-Za-z]\s+[A-Za-z]", text) else text
    body = _ZH_PREFIX.sub("", body, count=1)
    stripped = _ZH_SUFFIX.sub("", body, count=1).strip()
    # "轻音乐", "纯音乐": a one-letter remainder was part of a genre's name
    if (
        len(stripped) <= 1
        and len(body) > len(stripped)
        and not re.fullmatch(r"(的)?(歌曲|歌|音乐)?(吧|一下)?", body)
    ):
        return re.sub(r"(吧|好吗|一下|呗)$", "", body).strip()
    return stripped


def _search_term_en(text: str) -> str:
    body = _EN_PREFIX.sub("", text.lower(), count=1)
    body = _EN_SUFFIX.sub("", body, count=1).strip()
    if not body:
        return ""
    # keep the user's own capitalisation of the remaining words
    start = text.lower().rfind(body)
    return text[start : start + len(body)] if start >= 0 else body


def _split_artist_title_zh(what: str) -> tuple[str, str]:
    """ "周杰伦的七里香" → ("周杰伦", "七里香"); "七里香" → ("", "七里香")."""
    what = what.strip()
    if "的" in what:
        artist, _, title = what.rpartition("的")
        if title.strip() in ("", "歌", "歌曲", "音乐", "专辑"):
            return artist.strip(), ""
        if 2 <= len(artist.strip()) <= 8 and artist[0] not in "我你他她它这那":
            return artist.strip(), title.strip()
    return "", what


def _split_artist_title_en(what: str) -> tuple[str, str]:
    match = re.match(r"(?P<title>.+?)\s+by\s+(?P<artist>.+)$", what, re.I)
    if match:
        return match["artist"].strip(), match["title"].strip()
    return "", what.strip()


def read_intent(instruction: str | None) -> MusicIntent:
    """The intent of one instruction; "" (the desktop opening the window) is `home`."""
    quoted = re.search(r"[《「“\"](?P<title>[^》」”\"]+)[》」”\"]", instruction or "")
    text = _clean(instruction or "")
    if not text:
        return MusicIntent("home")
    english = not has_cjk(text)
    lower = text.lower()
    if _OPEN_APP.match(lower):  # "打开音乐应用" routed here: the home view
        return MusicIntent("home", english=english)
    controls = _CONTROL_EN if english else _CONTROL_ZH
    for kind, pattern in controls:
        if pattern.search(lower if english else text.replace(" ", "")):
            return MusicIntent(kind, english=english)
    download = _download_intent(text, quoted, english=english)
    if download is not None:
        return download

    # "play 晴天" is a request to hear it in either language
    english_verb = _PLAY_EN.match(lower)
    plays = english_verb or _PLAY_ZH.match(text.replace(" ", ""))
    term = _search_term(text, english_verb, english=english)
    wanted: IntentKind = "play" if plays else "search"
    if term.lower() in _GENERIC:
        return MusicIntent("play" if plays else "library", english=english)
    free_form = is_free_form(term)
    request = text if free_form else ""  # a wish is kept as the user said it
    split = _split_artist_title_en if english else _split_artist_title_zh
    artist, title = split(term)
    if artist and title:  # "陈奕迅的十年", "Yesterday by The Beatles": shown as said
        return MusicIntent(
            wanted,
            query=f"{title} {artist}",
            title=title,
            artist=artist,
            label=term,
            english=english,
            free_form=free_form,
            request=request,
        )
    return MusicIntent(
        wanted, query=term, english=english, free_form=free_form, request=request
    )


def _download_intent(
    text: str, quoted: re.Match[str] | None, *, english: bool
) -> MusicIntent | None:
    """A request to download a song ("下载周杰伦的晴天", "download Yesterday by The
    Beatles"), or None."""
    if english and "download" in text.lower():
        lower = text.lower()
        match = _DOWNLOAD_EN.search(lower)
        if match:
            start = lower.find(match["what"])
            what = text[start : start + len(match["what"])]
            artist, title = _split_artist_title_en(what)
            return _download(title, artist, english=True)
    if not english and "下载" in text:
        match = _DOWNLOAD_ZH.search(text)
        if match and quoted:  # 《…》 names the song exactly
            before = match["what"].split(quoted["title"].strip(), 1)[0]
            artist = before.strip().removesuffix("的").strip()
            return _download(quoted["title"], artist, english=False, exact=True)
        if match:
            artist, title = _split_artist_title_zh(match["what"])
            return _download(title, artist, english=False)
    return None


def _search_term(text: str, english_verb: re.Match[str] | None, *, english: bool) -> str:
    """What to look for in `text`, without the words asking for it."""
    if english:
        return _search_term_en(text)
    if english_verb:  # "play songs by 周杰伦": the English words around the name go
        rest = text[english_verb.end() :].strip()
        said = _EN_PREFIX.match(rest.lower())
        rest = rest[said.end() :] if said else rest
        after = _EN_SUFFIX.search(rest.lower())
        return _search_term_zh(rest[: after.start()] if after else rest)
    return _search_term_zh(text)


def _download(
    title: str, artist: str, *, english: bool, exact: bool = False
) -> MusicIntent:
    title = title.strip()
    artist = artist.strip()
    if exact:
        pass
    elif english:
        title = _EN_SUFFIX.sub("", title).strip()
    else:
        title = _ZH_SUFFIX.sub("", title).strip() or title
    if not title or title.lower() in _GENERIC:
        # "下载周杰伦的歌": no one song named; search so the user can pick one
        return (
            MusicIntent("search", query=artist, english=english)
            if artist
            else (MusicIntent("library", english=english))
        )
    query = f"{title} {artist}".strip()
    return MusicIntent("download", query=query, title=title, artist=artist, english=english)
