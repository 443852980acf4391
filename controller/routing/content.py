"""What in an instruction is its content, not evidence of which app should act.

The router reads an instruction for the words that name a job ("播放", "提醒我",
"运行"). Some words are the job's material instead, and must not pull the request
towards another app:

* quoted words and titles: `提醒我“播放音乐”`, 《七里香》, `say "play"`;
* what a reminder should say: everything after 提醒我 / remind me;
* what a scheduled job should do: everything after a leading delay, recurrence, or
  day and hour ("10分钟后播放音乐", "明天下午3点播放音乐", "every day at 8am play
  music", "tomorrow at 3pm play music"): the time phrase makes it a request for later,
  which is the scheduler's (`timed`), whatever the job will do (English may say the
  time last: "play music at 7pm");
* the topic of a piece of writing or a title given in words ("写一首关于音乐的诗",
  "以代码为主题", "write a poem about music", "a song called Run"): the topic goes,
  and what it stood between joins up ("写一首诗");
* the material of a request about text, after a colon ("翻译：play the next song",
  "总结以下内容：…");
* a program's code: from the first Python statement on ("运行这段代码 print('播放')");
* what a request for knowledge is about, and what leads up to a work named by its
  kind ("总结一下周杰伦的音乐风格", "搜索《代码大全》这本书": `subject`).

`content_spans` finds them in one part of an instruction (content runs to the part's
end, a topic to its 的); `without_content` is the part as the router scores it;
`timed` says whether the part is a request for later; `blank_quoted` is what the
splitter uses so that it never cuts inside quotes or brackets.
"""

from __future__ import annotations

import re

from controller.routing.subject import knowledge_topic, subject_spans
from controller.routing.text import normalize, split_units

__all__ = [
    "BLANK",
    "asked_topic",
    "blank",
    "blank_quoted",
    "content_spans",
    "quoted_spans",
    "subject_request",
    "timed",
    "without_content",
]

BLANK = "\x00"  # no word, and punctuation to the matcher: nothing joins across it

_QUOTES = {"“": "”", "‘": "’", "《": "》", "「": "」", "『": "』", "〈": "〉"}
_BRACKETS = {"(": ")", "[": "]", "{": "}", "（": "）", "【": "】"}
_SAME_CLOSE = ('"', "'", "`")
_OPENING_QUOTE = re.compile("[" + re.escape("".join([*_QUOTES, *_SAME_CLOSE])) + "]")
_OPENING_ANY = re.compile(
    "[" + re.escape("".join([*_QUOTES, *_BRACKETS, *_SAME_CLOSE])) + "]"
)

_REMINDER = re.compile(
    r"提醒(?:一下)?(?:我们|我|你|他|她|大家)|\bremind\s+(?:me|us|him|her|them)\b",
    re.IGNORECASE,
)

_NUMBER = r"[\d一二两三四五六七八九十百半]+"
_PART_OF_DAY = r"(?:早上|早晨|上午|中午|下午|傍晚|晚上|夜里|凌晨)"
_CLOCK = rf"(?:{_NUMBER}(?:点|时)(?:{_NUMBER}分?|半|整|钟)?|\d{{1,2}}[:：]\d\d)"
_DELAY = rf"(?:过)?{_NUMBER}个?(?:秒钟?|分钟|小时|钟头|天|星期|周)(?:之后|以后|后)"
_EVERY = (
    rf"(?:每隔{_NUMBER}个?(?:秒钟?|分钟|小时|钟头|天)"
    rf"|(?:每天|每日|每晚|每早|每周[一二三四五六日天]?|每星期[一二三四五六日天]|工作日)"
    rf"(?:{_PART_OF_DAY}?{_CLOCK}|{_PART_OF_DAY})"
    rf"|每小时)"
)
_DAY = r"(?:今天|今晚|明天|明早|明晚|后天|下?周[一二三四五六日天]|星期[一二三四五六日天])"
_EN_UNIT = r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?)"
_EN_CLOCK = r"\d{1,2}(?::\d\d)?\s*(?:am|pm|o'clock)?"
_EN_EVERY = (
    rf"every\s+(?:\d+\s*{_EN_UNIT}|hour|morning|evening|night"
    r"|(?:day|weekday|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    rf"(?:\s+(?:morning|evening|night))?\s+at\s+{_EN_CLOCK})"
)
# a leading time phrase that makes the request a job for later: what follows is its
# content (an instruction that merely mentions a day, "明天会下雨吗", is not one; a
# day needs its hour). The forms are the ones the scheduler's phrase table reads.
_SCHEDULE = re.compile(
    rf"^\s*(?:请|帮我|麻烦)?\s*(?:{_DELAY}|{_EVERY}|{_DAY}?{_PART_OF_DAY}?{_CLOCK}"
    rf"|in\s+(?:\d+|an?|half\s+an)\s*{_EN_UNIT}\b|{_EN_EVERY}\b"
    rf"|(?:(?:today|tomorrow)\s+)?at\s+{_EN_CLOCK}(?=\s|,|$))\s*(?:[,，]\s*)?",
    re.IGNORECASE,
)
# English also says when after what ("wake me up tomorrow at 8am", "play music in
# 10 minutes", "stretch every day at 9"): a closing time phrase of the same forms
_SCHEDULE_AFTER = re.compile(
    rf"\s(?:in\s+(?:\d+|an?|half\s+an)\s*{_EN_UNIT}|{_EN_EVERY}"
    rf"|(?:tomorrow\s+)?at\s+{_EN_CLOCK}(?:\s+tomorrow)?)\s*[.!]?\s*$",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"\s*(?:what|when|where|who|whose|why|how|which)\b", re.I)
# the topic of a piece of writing, or a name given in words: "关于X的", "以X为主题",
# "题为X的", "about X" (not "how about", "what about"), "called X"; a topic without
# its closing 的 runs to the part's end
_TOPIC = re.compile(
    r"关于(?P<zh>[^，,。；;：:]+?)(?:的|(?=[，,。；;：:]|$))"
    r"|以(?P<theme>[^，,。；;]+?)为(?:主题|题目|题)"
    r"|(?:题为|名为|名叫|叫做)(?P<named>[^，,。；;]+?)的"
    r"|(?<!how )(?<!what )\babout\s+(?P<en>.+)$"
    r"|\b(?:called|titled|named|entitled)\s+(?P<title>.+)$",
    re.IGNORECASE,
)
# a colon that introduces the material of a request ("翻译：…"), not one inside a
# clock ("8:30") or a link ("http://")
_COLON = re.compile(r"(?<!\d)[:：](?!//)|(?<=\d)：")
# where a program starts: a call (`print(`), an assignment, an import, a definition;
# English prose ("search for songs", "play Yesterday (live)") does not look like one
_PROGRAM = re.compile(
    r"(?<![\w.])(?:import\s+\w|from\s+[\w.]+\s+import\s|def\s+\w+\s*\(|class\s+\w+\s*[(:]"
    r"|[A-Za-z_][\w.]*\((?!\s*\))|[A-Za-z_][\w.]*\s*[-+*/%]?=(?!=)\s*\S)"
)


_WORD = re.compile(r"[^\W_]")
_LATIN = re.compile(r"[A-Za-z0-9]")


def quoted_spans(text: str, *, brackets: bool = False) -> list[tuple[int, int]]:
    """The insides of the outermost quotes (and, with `brackets`, brackets) of `text`.

    A straight quote after a Latin letter or digit is an apostrophe ("what's"), not a
    quote; after a Chinese character it opens one ('说"播放"这个词').
    """
    if (_OPENING_ANY if brackets else _OPENING_QUOTE).search(text) is None:
        return []  # most instructions: nothing opens a span
    openers = {**_QUOTES, **_BRACKETS} if brackets else _QUOTES
    spans: list[tuple[int, int]] = []
    closer: list[str] = []
    start = 0
    for i, char in enumerate(text):
        if closer:
            if char == closer[-1]:
                closer.pop()
                if not closer:
                    spans.append((start, i))
            elif char in openers and closer[-1] not in _SAME_CLOSE:
                closer.append(openers[char])
            continue
        if char in openers:
            closer.append(openers[char])
            start = i + 1
        elif char in _SAME_CLOSE and not (i and _LATIN.match(text[i - 1])):
            closer.append(char)
            start = i + 1
    if closer:  # an unclosed quote runs to the end
        spans.append((start, len(text)))
    return [(a, b) for a, b in spans if b > a]


def blank(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with every span replaced by `BLANK`s (same length)."""
    if not spans:
        return text
    out = list(text)
    for start, end in spans:
        out[start:end] = BLANK * (end - start)
    return "".join(out)


def blank_quoted(text: str) -> str:
    """`text` with the insides of its quotes and brackets blanked (same length)."""
    return blank(text, quoted_spans(text, brackets=True))


def _material_start(visible: str) -> int | None:
    """Where the material after a request's colon starts: the colon must follow a
    word that is not filler ("翻译：", not "帮我：") and be followed by more text."""
    colon = _COLON.search(visible)
    if colon is None or not visible[colon.end() :].strip():
        return None
    before = split_units(normalize(visible[: colon.start()]))
    return colon.end() if any(not unit.filler for unit in before) else None


def topic_spans(text: str) -> list[tuple[int, int]]:
    """The topics and given names of `text` (see `_TOPIC`), outside quotes."""
    visible = blank(text, quoted_spans(text))
    spans = []
    for match in _TOPIC.finditer(visible):
        group = next(name for name, value in match.groupdict().items() if value)
        start, end = match.span(group)
        if group in ("zh", "named") and match.group(0).endswith("的"):
            end += 1  # "关于X的" goes whole: "写一首[关于X的]诗" → "写一首诗"
            start = match.start()
        elif group == "zh":
            start = match.start()
        elif group in ("en", "title"):
            start = match.start()  # "about X": the preposition goes with its object
        spans.append((start, end))
    return spans


def content_spans(text: str, *, scheduled: bool = True) -> list[tuple[int, int]]:
    """The spans of `text` (one part of an instruction) that are content; with
    `scheduled` false, what follows a leading time phrase is not content by that alone
    (the router's second look when no scheduler is installed: "后天早上7点叫我起床")."""
    spans = quoted_spans(text)
    visible = blank(text, spans)
    starts: list[int] = []
    reminder = _REMINDER.search(visible)
    timed_phrase = _SCHEDULE.match(visible) if scheduled else None
    if reminder:  # the reminder's verb is the request, even after a time phrase
        starts.append(reminder.end())
    elif timed_phrase and timed_phrase.end() < len(text):
        starts.append(timed_phrase.end())
    program = _PROGRAM.search(visible)
    if program and program.start() > 0:  # a bare program is the code app's to read
        starts.append(program.start())
    material = _material_start(visible)
    if material is not None:
        starts.append(material)
    if starts:
        spans.append((min(starts), len(text)))
    return spans + subject_spans(visible) + topic_spans(text)


def timed(text: str) -> bool:
    """Whether `text` (one part of an instruction) asks for something later: it starts
    with a delay, a recurrence or a day and hour, and a request follows (not only
    particles: "3点了吗" asks the time); or, in English, a request comes first and
    such a time phrase closes it ("wake me up tomorrow at 8am")."""
    visible = blank(text, quoted_spans(text))
    phrase = _SCHEDULE.match(visible)
    if phrase is not None:
        rest = visible[phrase.end() :]
    else:
        after = _SCHEDULE_AFTER.search(visible)
        if after is None or _QUESTION.match(visible):
            return False  # "what is on at 7pm" asks, it sets nothing
        rest = visible[: after.start()]
    words = split_units(normalize(rest))
    return any(not unit.filler for unit in words) or BLANK in rest


def subject_request(text: str) -> bool:
    """Whether `text` (one part of an instruction) asks for knowledge about a topic or
    for a work named by its kind (`subject`): a request of its own, even when no app's
    words claim it."""
    return bool(subject_spans(blank(text, quoted_spans(text))))


def asked_topic(text: str) -> str | None:
    """The topic a knowledge verb asks about in `text` (one part of an instruction),
    when it is no aspect of something or a work (`subject.knowledge_topic`)."""
    return knowledge_topic(blank(text, quoted_spans(text)))


def without_content(text: str, *, scheduled: bool = True) -> str:
    """`text` as the router scores it: each content span one `BLANK`, each topic
    gone (what it stood between joins up); `text` itself when nothing else would be
    left to go by."""
    spans = content_spans(text, scheduled=scheduled)
    if not spans:
        return text
    topics = topic_spans(text)
    blanked = [span for span in spans if span not in topics]
    marked = list(blank(text, blanked))
    for start, end in topics:
        for i in range(start, end):
            if marked[i] != BLANK:
                marked[i] = ""
    kept = re.sub(f"{BLANK}+", BLANK, "".join(marked))
    return kept if _WORD.search(kept) else text
