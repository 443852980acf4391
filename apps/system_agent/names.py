"""Which element of the desktop's UI snapshot a person means by a name.

`find_element("播放按钮", elements)` looks for the exact name first: an element's
label or its role (its id without the prefix, `btn_play` → "play"), directly or
through the Chinese ↔ English word table ("播放" ↔ "play"), a type word ("按钮",
"box") preferring elements of that type. Only when no element has that exact name
does a fuzzy one count: a typo ("播放按扭") or the name said with more words around
it. A label that merely contains the name ("最近播放" for "播放", "Recently played"
for "play") is another element: it is offered as a similar name, never acted on.
Several elements with the name (the 播放 buttons of two songs) are all returned, so
the answer can ask which; naming a row ("晴天的播放按钮", "the play button of
Evening Rain"), a window ("音乐应用的播放按钮") or an ordinal ("第二个播放按钮", "the
second play button") picks among them. A play/pause toggle is one control under
either of its names: while a song plays the player's button reads 暂停 and is still
the 播放按钮, a little behind a control that is called 播放 itself. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from .phrases import plain

__all__ = ["Found", "WORDS", "describe", "find_element", "means_play"]

# Chinese ↔ English words for element names, both directions.
WORDS: dict[str, tuple[str, ...]] = {
    "播放": ("play",),
    "暂停": ("pause",),
    "继续": ("resume",),
    "下一首": ("next",),
    "上一首": ("prev", "previous"),
    "搜索": ("search", "command bar"),  # no search box on screen: the command bar
    "筛选": ("filter",),
    "音质": ("quality", "set_quality"),
    "下载": ("download",),
    "最近播放": ("recent", "recently played"),
    "任务栏": ("taskbar", "task bar"),
    "命令栏": ("command bar", "command_bar", "command"),
    "命令框": ("command bar", "command_bar"),
    "指令栏": ("command bar", "command_bar"),
    "输入栏": ("command bar", "command_bar", "input"),
    "输入框": ("input", "command bar"),
    "时钟": ("clock",),
    "开始菜单": ("start menu", "start"),
    "开始": ("start",),
    "菜单": ("menu",),
    "托盘": ("tray",),
    "麦克风": ("mic", "microphone", "voice"),
    "语音": ("voice", "mic"),
    "运行": ("run",),
    "保存": ("save",),
    "编辑": ("edit",),
    "刷新": ("refresh",),
    "设置": ("settings",),
    "返回": ("back",),
    "音乐": ("music", "music_app"),
    "代码": ("code", "code_app"),
    "系统": ("system", "system_agent"),
    "桌面": ("desktop",),
    "壁纸": ("wallpaper", "background"),
    "背景": ("background", "wallpaper"),
    "桌面背景": ("desktop background", "background", "wallpaper", "desktop"),
    "标题栏": ("title bar", "titlebar", "title"),
}
# the names of a play/pause toggle in each of its states: any one finds it
_PLAY_PAUSE = ("播放", "暂停", "继续", "play", "pause", "resume")
_PLAY_PAUSE_STEM = re.compile(r"^(play|pause|resume)(_\d+)?$")
TOGGLED = 0.95  # a toggle found by its other name counts a little less
_EN_TO_ZH: dict[str, list[str]] = {}
for _zh, _ens in WORDS.items():
    for _en in _ens:
        _EN_TO_ZH.setdefault(_en, []).append(_zh)

_TYPE_HINTS_ZH = [
    ("input", ("搜索框", "输入框", "文本框", "框", "输入栏")),
    ("select", ("下拉框", "选择框", "下拉菜单")),
    ("button", ("按钮", "按键", "键")),
    ("window", ("窗口",)),
    ("icon", ("图标",)),
]
_TYPE_HINTS_EN = [
    ("input", ("box", "input", "field", "textbox", "search bar")),
    ("select", ("select", "dropdown")),
    ("button", ("button", "btn")),
    ("window", ("window",)),
    ("icon", ("icon",)),
]
_TYPE_FAMILY = {
    "input": {"input", "text", "search", "textbox", "textarea", "select", "command_bar"},
    "select": {"select"},
    "button": {"button", "btn"},
    "window": {"window"},
    "icon": {"icon", "app_icon", "taskbar_icon"},
}
_PREFIX = re.compile(r"^(btn|win|input|icon|task|taskbar_icon|el)[_-]")

# A name reached through a translation counts a little less than the element's own
# id or label, so "命令栏" picks the command bar over a 搜索 box whose translations
# happen to include "command bar".
TRANSLATED = 0.97
FUZZY_RATIO = 75  # rapidfuzz ratio for a typo of a whole name ("paly" for "play")
SIMILAR_RATIO = 60

_ORDINALS_ZH = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6}
_ORDINALS_EN = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}
_ORDINAL_ZH = re.compile(r"(第\s*(?P<n>[一二两三四五六]|\d{1,2})\s*个|(?P<last>最后一个))")
_ORDINAL_EN = re.compile(
    r"\b((?P<word>first|second|third|fourth|fifth)|(?P<n>\d{1,2})(st|nd|rd|th)|(?P<last>last))\b"
)


@dataclass
class Found:
    """What a name means on the desktop: one element, several to choose from, none.

    `words` is the name without the row, window or ordinal that qualified it, and
    `row` that qualifier as the screen shows it ("晴天"), when the user gave one."""

    elements: list[dict[str, Any]] = field(default_factory=list)
    similar: list[dict[str, Any]] = field(default_factory=list)
    words: str = ""
    row: str = ""

    @property
    def element(self) -> dict[str, Any] | None:
        return self.elements[0] if len(self.elements) == 1 else None


def _norm(text: str) -> str:
    return re.sub(r"[\s_-]+", " ", (text or "").lower()).strip()


def _type_hint(phrase: str) -> tuple[str | None, str]:
    """("button", "播放") for "播放按钮"; the phrase without its type word."""
    lower = phrase.lower().strip()
    hints = _TYPE_HINTS_ZH if re.search(r"[\u3400-\u9fff]", lower) else _TYPE_HINTS_EN
    for hint, words in hints:
        for word in words:
            if lower.endswith(word) and len(lower) > len(word):
                core = lower[: -len(word)].strip(" 的")
                return hint, ("搜索" if word == "搜索框" else core)
            if lower == word == "搜索框":
                return hint, "搜索"
    return None, lower


def _add(into: dict[str, float], texts: Sequence[str], weight: float) -> None:
    for text in texts:
        key = _norm(text)
        if key and into.get(key, 0.0) < weight:
            into[key] = weight


def _translations(text: str) -> list[str]:
    return [*WORDS.get(text, ()), *_EN_TO_ZH.get(text, ()), *_EN_TO_ZH.get(_norm(text), ())]


def _phrase_names(phrase: str) -> dict[str, float]:
    """The names the phrase may mean, each with its weight."""
    _, core = _type_hint(phrase)
    base = [phrase.lower().strip(), core]
    names: dict[str, float] = {}
    _add(names, base, 1.0)
    for text in base:
        _add(names, _translations(text), TRANSLATED)
    return names


def _element_names(element: Mapping[str, Any]) -> dict[str, float]:
    """The element's names (id, role, label, their translations) with weights."""
    ident = str(element.get("id") or "").lower()
    label = str(element.get("label") or "").lower().strip()
    stem = _PREFIX.sub("", ident)
    names: dict[str, float] = {}
    _add(names, [ident, stem, label], 1.0)
    for text in (label, stem, stem.replace("_", " ")):
        _add(names, _translations(text), TRANSLATED)
    if label in _PLAY_PAUSE or _PLAY_PAUSE_STEM.match(stem):
        _add(names, _PLAY_PAUSE, TOGGLED)
    return names


def means_play(phrase: str) -> bool:
    """Whether `phrase` names a play/pause control ("播放按钮", "the pause button")."""
    return any(name in _PLAY_PAUSE for name in _phrase_names(phrase))


def _exact(phrase: Mapping[str, float], element: Mapping[str, float]) -> float:
    return max((w * element[n] for n, w in phrase.items() if n in element), default=0.0)


def _fuzzy(phrase: Mapping[str, float], element: Mapping[str, float]) -> float:
    """A typo of the name, or the name said with more words around it (never the
    other way round: a longer label is another element)."""
    best = 0.0
    for said, ws in phrase.items():
        for name, wn in element.items():
            if len(name) >= 2 and name in said and 2 * len(name) >= len(said):
                score = 90.0 - 10 * (len(said) - len(name)) / len(said)
            else:
                score = float(fuzz.ratio(said, name))
                if score < FUZZY_RATIO:
                    continue
            best = max(best, score * ws * wn)
    return best


def _similar(core: Mapping[str, float], element: Mapping[str, float]) -> float:
    """How close an element's name is to the name said without its type word."""
    return max(
        (
            100.0 if said in name else float(fuzz.ratio(said, name))
            for said in core
            for name in element
            if len(said) >= 2
        ),
        default=0.0,
    )


def _ordinal(phrase: str) -> tuple[int | None, str]:
    """(2, "播放按钮") for "第二个播放按钮"; -1 means the last one."""
    match = _ORDINAL_ZH.search(phrase) or _ORDINAL_EN.search(phrase.lower())
    if not match:
        return None, phrase
    groups = match.groupdict()
    if groups.get("last"):
        number = -1
    elif groups.get("word"):
        number = _ORDINALS_EN[groups["word"]]
    else:
        raw = groups["n"]
        number = int(raw) if raw.isdigit() else _ORDINALS_ZH[raw]
    rest = (phrase[: match.start()] + " " + phrase[match.end() :]).strip(" 的")
    return number, re.sub(r"\s+", " ", rest)


def _window_labels(elements: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    return {
        str(e["id"]): str(e.get("label") or "")
        for e in elements
        if str(e.get("id") or "").startswith("win_")
    }


def _qualifiers(
    phrase: str, elements: Sequence[Mapping[str, Any]]
) -> list[tuple[str, str, list[Mapping[str, Any]]]]:
    """[("晴天", "播放按钮", the elements of that row)] for each row or window the
    snapshot shows that the phrase names, longest first."""
    said = plain(phrase)
    windows = _window_labels(elements)
    groups: dict[str, tuple[str, list[Mapping[str, Any]]]] = {}
    for element in elements:
        for shown in (
            str(element.get("row") or ""),
            windows.get(str(element.get("window")), ""),
        ):
            key = plain(shown)
            if len(key) >= 2:
                groups.setdefault(key, (shown, []))[1].append(element)
    found = []
    for key in sorted(groups, key=len, reverse=True):
        if key in said and len(key) < len(said):
            rest = said.replace(key, " ", 1)
            rest = re.sub(r"\s+", " ", rest).strip(" 的").removeprefix("'s ").strip()
            if rest:
                found.append((groups[key][0], rest, groups[key][1]))
    return found


def find_element(phrase: str, elements: Sequence[Mapping[str, Any]]) -> Found:
    """The element(s) `phrase` means among the snapshot's `elements` (see the module)."""
    phrase = (phrase or "").strip()
    usable = [e for e in elements if isinstance(e, Mapping) and e.get("id")]
    if not phrase:
        return Found()
    for element in usable:
        if str(element["id"]).lower() == phrase.lower():
            return Found([dict(element)], words=phrase)
    number, rest = _ordinal(phrase)
    # a row or window named in the phrase narrows it, when the rest names something there
    for row, words, pool in [*_qualifiers(rest, usable), ("", rest, usable)]:
        chosen = _matches(words, pool)
        if chosen or not row:
            break
    if number is not None and len(chosen) > 1:
        index = number - 1 if number > 0 else len(chosen) - 1
        if 0 <= index < len(chosen):
            picked = chosen[index]
            return Found([picked], words=words, row=row or str(picked.get("row") or ""))
    if chosen:
        return Found(chosen, words=words, row=row)
    _, core = _type_hint(words)
    names: dict[str, float] = {}
    _add(names, [core, *_translations(core)], 1.0)
    close = sorted(
        ((e, _similar(names, _element_names(e))) for e in pool), key=lambda pair: -pair[1]
    )
    similar = [dict(e) for e, score in close if score >= SIMILAR_RATIO][:3]
    return Found([], similar, words=words, row=row)


def _matches(words: str, pool: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The elements of `pool` named `words` exactly, else fuzzily."""
    hint, _ = _type_hint(words)
    said = _phrase_names(words)
    named = [(e, _element_names(e)) for e in pool]
    chosen = _best([(e, _exact(said, names)) for e, names in named], hint)
    return chosen or _best([(e, _fuzzy(said, names)) for e, names in named], hint)


def _best(
    scored: Sequence[tuple[Mapping[str, Any], float]], hint: str | None
) -> list[dict[str, Any]]:
    """The elements of the best score (in page order), narrowed by the type word, to
    the visible ones, and to an app's window rather than its taskbar icon."""
    top = max((score for _, score in scored), default=0.0)
    if top <= 0:
        return []
    chosen = [dict(e) for e, score in scored if abs(score - top) < 1e-6]
    if hint:
        family = _TYPE_FAMILY.get(hint, {hint})
        typed = [e for e in chosen if str(e.get("type") or "").lower() in family]
        chosen = typed or chosen
    visible = [e for e in chosen if e.get("visible", True) is not False]
    chosen = visible or chosen
    windows = {str(e["id"])[4:] for e in chosen if str(e["id"]).startswith("win_")}
    return [
        e
        for e in chosen
        if not (str(e["id"]).startswith("task_") and str(e["id"])[5:] in windows)
    ]


def describe(
    candidates: Sequence[Mapping[str, Any]], elements: Sequence[Mapping[str, Any]]
) -> list[str]:
    """How to tell each candidate apart on screen: its row, else its window, else its
    label; numbered when that is still not enough."""
    windows = _window_labels(elements)
    names = [
        str(
            e.get("row")
            or windows.get(str(e.get("window")), "")
            or e.get("label")
            or e.get("id")
        )
        for e in candidates
    ]
    if len(set(names)) < len(names):
        names = [f"{name} #{i}" for i, name in enumerate(names, 1)]
    return names
