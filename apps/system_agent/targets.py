"""From a parsed request and the desktop's UI snapshot to UI commands.

`resolve_element("播放按钮", elements)` finds `btn_play` by id or label, in Chinese
or English, fuzzily (rapidfuzz); `resolve_app("音乐窗口", elements)` finds an app
id for window operations; `plan_ui(request, snapshot)` computes the commands —
positions keep a 20 px margin inside the snapshot's `viewport` ("左上角" →
(20, 20)) — and the sentence to speak, in the user's language (`turn.tr`):
"已将播放按钮移到左上角", "Moved the play button to the top-left". Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from aios_sdk import Turn

from .phrases import COLOR_NAMES, UiRequest, has_cjk

__all__ = [
    "APP_NAMES",
    "APP_NAMES_EN",
    "DEFAULT_VIEWPORT",
    "MARGIN",
    "Outcome",
    "Resolved",
    "plain_number",
    "plan_ui",
    "position_point",
    "resolve_app",
    "resolve_element",
    "viewport_size",
]

MARGIN = 20
DEFAULT_VIEWPORT = (1280.0, 800.0)
MIN_SCORE = 62

# Chinese ↔ English words for element names, both directions.
_WORDS: dict[str, tuple[str, ...]] = {
    "播放": ("play",),
    "暂停": ("pause",),
    "继续": ("resume",),
    "下一首": ("next",),
    "上一首": ("prev", "previous"),
    "搜索": ("search", "command bar"),  # no search box on screen: the command bar
    "筛选": ("filter",),
    "音质": ("quality", "set_quality"),
    "下载": ("download",),
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
    "背景": ("background",),
}
_EN_TO_ZH: dict[str, list[str]] = {}
for _zh, _ens in _WORDS.items():
    for _en in _ens:
        _EN_TO_ZH.setdefault(_en, []).append(_zh)

_TYPE_HINTS_ZH = [
    ("input", ("搜索框", "输入框", "文本框", "框", "输入栏")),
    ("button", ("按钮", "按键", "键")),
    ("window", ("窗口",)),
    ("icon", ("图标",)),
]
_TYPE_HINTS_EN = [
    ("input", ("box", "input", "field", "textbox", "search bar")),
    ("button", ("button", "btn")),
    ("window", ("window",)),
    ("icon", ("icon",)),
]
_TYPE_FAMILY = {
    "input": {"input", "text", "search", "textbox", "textarea", "select", "command_bar"},
    "button": {"button", "btn"},
    "window": {"window"},
    "icon": {"icon", "app_icon"},
}

# Installed apps known by name; the snapshot's windows (`win_<app_id>`) add more.
APP_ALIASES: dict[str, tuple[str, ...]] = {
    "music_app": (
        "音乐应用",
        "音乐",
        "音乐播放器",
        "播放器",
        "music",
        "music app",
        "music player",
    ),
    "code_app": (
        "代码应用",
        "代码",
        "编程",
        "代码编辑器",
        "编辑器",
        "code",
        "code app",
        "coding",
        "editor",
    ),
    "system_agent": ("系统控制", "系统", "system", "system control", "system agent"),
    "hello_app": ("Hello小AI", "hello", "打招呼", "问候", "hello app", "greeting"),
}
APP_NAMES = {
    "music_app": "音乐应用",
    "code_app": "代码应用",
    "system_agent": "系统控制",
    "hello_app": "Hello小AI",
}
APP_NAMES_EN = {
    "music_app": "Music",
    "code_app": "Code",
    "system_agent": "System Control",
    "hello_app": "Hello AI",
}

_POSITION_ZH = {
    "top-left": "左上角",
    "top-right": "右上角",
    "bottom-left": "左下角",
    "bottom-right": "右下角",
    "center": "中间",
    "top": "顶部",
    "bottom": "底部",
    "left": "左边",
    "right": "右边",
}
# CSS colour → its Chinese word, for an answer in Chinese to "make it red"
_COLOR_ZH: dict[str, str] = {}
for _word, _css in COLOR_NAMES.items():
    if has_cjk(_word):
        _COLOR_ZH.setdefault(_css, f"{_word}色")


@dataclass
class Resolved:
    element: dict[str, Any]
    score: float


@dataclass
class Outcome:
    """What to answer: commands for the desktop, a sentence, or a reason it failed."""

    ok: bool
    message: str
    commands: list[dict[str, Any]] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)


def _type_hint(phrase: str) -> tuple[str | None, str]:
    """("button", "播放") for "播放按钮"; the phrase without its type word."""
    lower = phrase.lower().strip()
    hints = _TYPE_HINTS_ZH if re.search(r"[\u3400-\u9fff]", lower) else _TYPE_HINTS_EN
    for hint, words in hints:
        for word in words:
            if lower.endswith(word) and len(lower) > len(word):
                core = lower[: -len(word)].strip(" 的")
                if word in ("搜索框",):
                    core = "搜索"
                return hint, core
            if lower == word and word in ("搜索框",):
                return hint, "搜索"
    return None, lower


# A name reached through a translation counts a little less than the element's own
# id or label, so "命令栏" picks the command bar over a 搜索 box whose translations
# happen to include "command bar".
TRANSLATED = 0.97


def _add(into: dict[str, float], texts: Sequence[str], weight: float) -> None:
    for text in texts:
        if text and into.get(text, 0.0) < weight:
            into[text] = weight


def _variants(phrase: str) -> dict[str, float]:
    """The phrase's names to look for, each with its weight."""
    _, core = _type_hint(phrase)
    base = [phrase.lower().strip(), core]
    out: dict[str, float] = {}
    _add(out, base, 1.0)
    for text in base:
        _add(out, _WORDS.get(text, ()), TRANSLATED)
        _add(out, _EN_TO_ZH.get(text, ()), TRANSLATED)
        for word in text.split():
            _add(out, _WORDS.get(word, ()), TRANSLATED)
    return out


def _keys(element: Mapping[str, Any]) -> dict[str, float]:
    """The element's names (id, id without prefix, label, translations) with weights."""
    ident = str(element.get("id") or "").lower()
    label = str(element.get("label") or "").lower().strip()
    stem = re.sub(r"^(btn|win|input|icon|task|taskbar_icon|el)[_-]", "", ident)
    keys: dict[str, float] = {}
    _add(keys, [ident, stem, stem.replace("_", " "), label], 1.0)
    for text in (label, stem):
        _add(keys, _WORDS.get(text, ()), TRANSLATED)
        _add(keys, _EN_TO_ZH.get(text, ()), TRANSLATED)
        _add(keys, _EN_TO_ZH.get(text.replace("_", " "), ()), TRANSLATED)
    return keys


def _pair_score(a: str, b: str) -> float:
    if a == b:
        return 100.0
    if min(len(a), len(b)) >= 2 and (a in b or b in a):
        return 88.0 - 2 * abs(len(a) - len(b)) / max(len(a), len(b)) * 10
    return float(fuzz.ratio(a, b))


def resolve_element(
    phrase: str, elements: Sequence[Mapping[str, Any]]
) -> tuple[Resolved | None, list[Resolved]]:
    """The element `phrase` names (or None) and the ranked candidates."""
    phrase = (phrase or "").strip()
    if not phrase:
        return None, []
    hint, _ = _type_hint(phrase)
    variants = _variants(phrase)
    ranked: list[Resolved] = []
    for element in elements:
        if not isinstance(element, Mapping) or not element.get("id"):
            continue
        if str(element["id"]).lower() == phrase.lower():
            ranked.append(Resolved(dict(element), 200.0))
            continue
        keys = _keys(element)
        score = max(
            (
                _pair_score(v, k) * wv * wk
                for v, wv in variants.items()
                for k, wk in keys.items()
            ),
            default=0.0,
        )
        kind = str(element.get("type") or "").lower()
        if hint:
            score += 6 if kind in _TYPE_FAMILY.get(hint, {hint}) else -8
        if element.get("visible", True) is False:
            score -= 1
        ranked.append(Resolved(dict(element), score))
    # ties: the first control of an action (btn_play before btn_play_2)
    ranked.sort(key=lambda r: (-r.score, len(str(r.element.get("id")))))
    best = ranked[0] if ranked and ranked[0].score >= MIN_SCORE else None
    return best, ranked[:5]


def resolve_app(
    phrase: str, elements: Sequence[Mapping[str, Any]] = ()
) -> tuple[str, str] | None:
    """(app_id, display name) for an app named like "音乐窗口" or "the code app"."""
    core = re.sub(
        r"(窗口|应用程序|应用|程序|软件|\bapplication\b|\bapp\b|\bwindow\b)",
        " ",
        phrase,
        flags=re.I,
    )
    core = re.sub(r"\s+", " ", core).strip(" 的").lower()
    names: dict[str, list[str]] = {
        app: list(aliases) for app, aliases in APP_ALIASES.items()
    }
    display = dict(APP_NAMES)
    for element in elements:
        ident = str(element.get("id") or "")
        if ident.startswith("win_") and len(ident) > 4:
            app_id = ident[4:]
            label = str(element.get("label") or "").strip()
            names.setdefault(app_id, []).extend([app_id, app_id.replace("_", " ")])
            if label:
                names[app_id].append(label)
                display.setdefault(app_id, label)
    whole = phrase.strip().lower()
    best: tuple[float, str] | None = None
    for app_id, aliases in names.items():
        candidates = {a.lower() for a in aliases} | {app_id}
        for alias in candidates:
            for text in {core, whole}:
                if not text:
                    continue
                score = _pair_score(text, alias)
                if best is None or score > best[0]:
                    best = (score, app_id)
    if best is None or best[0] < 75:
        return None
    return best[1], display.get(best[1], best[1])


def viewport_size(snapshot: Mapping[str, Any]) -> tuple[float, float]:
    viewport = snapshot.get("viewport") or {}
    try:
        width, height = float(viewport["width"]), float(viewport["height"])
        if width > 0 and height > 0:
            return width, height
    except (KeyError, TypeError, ValueError):
        pass
    return DEFAULT_VIEWPORT


def position_point(
    position: str, element: Mapping[str, Any], viewport: tuple[float, float]
) -> tuple[float, float]:
    """Top-left corner that puts `element` at `position`, 20 px inside the viewport."""
    width = float(element.get("width") or 0)
    height = float(element.get("height") or 0)
    vw, vh = viewport
    x, y = float(element.get("x") or 0), float(element.get("y") or 0)
    left, top = MARGIN, MARGIN
    right, bottom = max(MARGIN, vw - width - MARGIN), max(MARGIN, vh - height - MARGIN)
    centre_x, centre_y = max(0.0, (vw - width) / 2), max(0.0, (vh - height) / 2)
    table = {
        "top-left": (left, top),
        "top-right": (right, top),
        "bottom-left": (left, bottom),
        "bottom-right": (right, bottom),
        "center": (centre_x, centre_y),
        "top": (x, top),
        "bottom": (x, bottom),
        "left": (left, y),
        "right": (right, y),
    }
    px, py = table[position]
    return plain_number(px), plain_number(py)


def plain_number(value: float) -> float:
    """Whole numbers stay whole (20, not 20.0) in the JSON the desktop gets."""
    rounded = round(value)
    return int(rounded) if abs(value - rounded) < 1e-9 else round(value, 1)


def _same_language(request: UiRequest, turn: Turn) -> bool:
    """Whether the user wrote in the language of the answer (their words fit in it)."""
    return request.english == (turn.language == "en-US")


def _name(request: UiRequest, element: Mapping[str, Any], turn: Turn) -> str:
    """How to call the element in the answer: the user's own words when they fit the
    answer's language, else the element's label."""
    if request.target and _same_language(request, turn):
        return f"the {request.target}" if request.english else request.target
    return str(element.get("label") or element.get("id"))


def _color_words(request: UiRequest, turn: Turn) -> str:
    """The colour as the user said it, or its name in the answer's language."""
    if _same_language(request, turn) or not request.color:
        return request.color_words
    return turn.tr(_COLOR_ZH.get(request.color, request.color), request.color)


def plan_ui(request: UiRequest, snapshot: Mapping[str, Any] | None, turn: Turn) -> Outcome:
    """The commands and the answer for an element operation (not window/status)."""
    elements = list((snapshot or {}).get("elements") or [])
    if not elements:
        return Outcome(
            False,
            turn.tr(
                "还没有收到桌面的界面快照，请先打开桌面再试。",
                "Desktop layout not available yet: open the desktop first.",
            ),
        )
    if not request.target:
        return Outcome(
            False,
            turn.tr(
                "要操作哪个元素？例如“播放按钮”。", "Which element? e.g. “the play button”."
            ),
        )
    best, ranked = resolve_element(request.target, elements)
    if best is None:
        names = [str(r.element.get("label") or r.element.get("id")) for r in ranked[:3]]
        message = turn.tr(
            f"桌面上没有找到“{request.target}”。"
            + (f"是不是：{'、'.join(names)}？" if names else ""),
            f"Cannot find “{request.target}” on the desktop."
            + (f" Did you mean: {', '.join(names)}?" if names else ""),
        )
        return Outcome(False, message, candidates=names)
    element = best.element
    ident = str(element["id"])
    name = _name(request, element, turn)
    op = request.op
    if op == "move":
        return _move(request, element, viewport_size(snapshot or {}), name, turn)
    if op == "resize":
        width = float(element.get("width") or 0)
        height = float(element.get("height") or 0)
        if request.size is not None:
            new_w = request.size[0] if request.size[0] is not None else width
            new_h = request.size[1] if request.size[1] is not None else height
        else:
            scale = request.scale or 1.25
            new_w, new_h = width * scale, height * scale
        if new_w <= 0 or new_h <= 0:
            return Outcome(
                False,
                turn.tr(f"{name}没有可调整的尺寸。", "That element has no size to change."),
            )
        command = {
            "op": "resize",
            "id": ident,
            "width": plain_number(round(new_w)),
            "height": plain_number(round(new_h)),
        }
        bigger = (new_w * new_h) >= (width * height)
        if request.size is not None:
            size = f"{command['width']}×{command['height']}"
            message = turn.tr(f"已将{name}调整为 {size}", f"Resized {name} to {size}")
        elif bigger:
            message = turn.tr(f"已将{name}放大", f"Made {name} bigger")
        else:
            message = turn.tr(f"已将{name}缩小", f"Made {name} smaller")
        return Outcome(True, message, [command])
    if op == "change_color":
        command = {"op": "change_color", "id": ident, "color": request.color}
        color = _color_words(request, turn)
        message = turn.tr(f"已将{name}改成{color}", f"Made {name} {color}")
        return Outcome(True, message, [command])
    if op == "rotate":
        degrees = plain_number(request.degrees or 0)
        command = {"op": "rotate", "id": ident, "degrees": degrees}
        if degrees == 0:
            message = turn.tr(f"已将{name}转回原样", f"Rotated {name} to 0 degrees")
        else:
            message = turn.tr(
                f"已将{name}旋转{degrees}度", f"Rotated {name} to {degrees} degrees"
            )
        return Outcome(True, message, [command])
    if op == "hide":
        message = turn.tr(f"已隐藏{name}", f"Hid {name}")
        return Outcome(True, message, [{"op": "hide", "id": ident}])
    if op == "show":
        message = turn.tr(f"已显示{name}", f"Showed {name}")
        return Outcome(True, message, [{"op": "show", "id": ident}])
    if op == "change_text":
        command = {"op": "change_text", "id": ident, "text": request.text or ""}
        message = turn.tr(
            f"已将{name}的文字改为“{request.text}”",
            f"Changed the text of {name} to “{request.text}”",
        )
        return Outcome(True, message, [command])
    return Outcome(False, turn.tr("我还不会这个操作。", "I do not know how to do that."))


def _move(
    request: UiRequest,
    element: Mapping[str, Any],
    viewport: tuple[float, float],
    name: str,
    turn: Turn,
) -> Outcome:
    ident = str(element["id"])
    if request.position:
        x, y = position_point(request.position, element, viewport)
        where = turn.tr(
            _POSITION_ZH.get(request.position, request.position_words),
            f"the {request.position}",
        )
    elif request.point:
        x, y = plain_number(request.point[0]), plain_number(request.point[1])
        where = f"({x}, {y})"
    elif request.delta:
        x = plain_number(float(element.get("x") or 0) + request.delta[0])
        y = plain_number(float(element.get("y") or 0) + request.delta[1])
        where = f"({x}, {y})"
    else:
        return Outcome(
            False,
            turn.tr(
                f"要把{name}移到哪里？例如“左上角”。", "Where to? e.g. “to the top-left”."
            ),
        )
    command = {"op": "move", "id": ident, "x": x, "y": y}
    message = turn.tr(f"已将{name}移到{where}", f"Moved {name} to {where}")
    return Outcome(True, message, [command])


_WINDOW_WORDS = {
    "open_window": ("已打开", "Opened"),
    "close_window": ("已关闭", "Closed"),
    "focus_window": ("已切换到", "Switched to"),
}


def plan_window(
    request: UiRequest, snapshot: Mapping[str, Any] | None, turn: Turn
) -> Outcome:
    """open/close/focus an app's window; "关闭任务栏" (not an app) hides the element."""
    elements = list((snapshot or {}).get("elements") or [])
    op = request.window_op or "open_window"
    app = resolve_app(request.target, elements)
    if app is None:
        if elements and op in ("open_window", "close_window"):
            fallback = UiRequest(
                "show" if op == "open_window" else "hide", request.target, request.english
            )
            if resolve_element(request.target, elements)[0] is not None:
                return plan_ui(fallback, snapshot, turn)
        return Outcome(
            False,
            turn.tr(
                f"没有找到应用“{request.target}”。已安装：{'、'.join(APP_NAMES.values())}",
                f"No app called “{request.target}”. "
                f"Installed: {', '.join(APP_NAMES_EN.values())}",
            ),
        )
    app_id, display = app
    zh_verb, en_verb = _WINDOW_WORDS[op]
    said = request.target if _same_language(request, turn) else ""
    message = turn.tr(
        f"{zh_verb}{said or display}",
        f"{en_verb} the {said}"
        if said
        else f"{en_verb} {APP_NAMES_EN.get(app_id, display)}",
    )
    return Outcome(True, message, [{"op": op, "id": app_id}])
