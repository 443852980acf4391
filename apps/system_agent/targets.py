"""From a parsed request and the desktop's UI snapshot to UI commands.

`plan_ui(request, snapshot, turn)` finds the element the request names (`names`),
computes the commands — positions keep a 20 px margin inside the snapshot's
`viewport` ("左上角" → (20, 20)), above the taskbar for what lives in a window — and
the sentence to speak, in the user's language (`turn.tr`): "已将播放按钮移到左上角",
"Moved the play button to the top-left". When the name fits several elements the
outcome asks which, with one choice per element (its row, window or label) that
carries that element's commands; when it fits none it says there is none, with the
similar names — or, for a play button while the music window lists no songs, that
there are no songs yet, offering that window's add-songs control. `resolve_app("音乐窗口", elements)` finds an app id for window
operations. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from aios_sdk import Turn
from aios_sdk.views import link

from .names import Found, describe, find_element, means_play
from .phrases import COLOR_NAMES, UiRequest, has_cjk

__all__ = [
    "APP_NAMES",
    "APP_NAMES_EN",
    "DEFAULT_VIEWPORT",
    "MARGIN",
    "Choice",
    "Outcome",
    "part_takes",
    "plain_number",
    "plan_ui",
    "plan_window",
    "position_point",
    "resolve_app",
    "shown_name",
    "viewport_size",
]

MARGIN = 20
GAP = 8  # between a moved control and the one it is put beside
DEFAULT_VIEWPORT = (1280.0, 800.0)

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
class Outcome:
    """What to answer: commands for the desktop and a sentence; or, not `ok`, the
    reason nothing was done (and what to `offer` instead: actions of the answer); or a
    question with the `choices` to answer it."""

    ok: bool
    message: str
    commands: list[dict[str, Any]] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    choices: list[Choice] = field(default_factory=list)
    offer: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Choice:
    """One answer to "which one?": how the screen tells it apart, and what it does."""

    label: str
    outcome: Outcome


def _pair_score(a: str, b: str) -> float:
    if a == b:
        return 100.0
    if min(len(a), len(b)) >= 2 and (a in b or b in a):
        return 88.0 - 2 * abs(len(a) - len(b)) / max(len(a), len(b)) * 10
    return float(fuzz.ratio(a, b))


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


def _area(snapshot: Mapping[str, Any], element: Mapping[str, Any]) -> tuple[float, float]:
    """Where `element` may go: the viewport; for a window or what is in one, the
    desktop above a visible taskbar (the taskbar is drawn over windows)."""
    width, height = viewport_size(snapshot)
    if element.get("type") == "window" or element.get("window"):
        for other in snapshot.get("elements") or []:
            if other.get("id") == "taskbar" and other.get("visible", True) is not False:
                top = float(other.get("y") or 0)
                if 0 < top < height:
                    height = top
    return width, height


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


def _name(request: UiRequest, element: Mapping[str, Any], found: Found, turn: Turn) -> str:
    """How to call the element in the answer: the user's own words when they fit the
    answer's language, else the element's label; with its row when one was named or
    chosen ("晴天的播放按钮", "the play button of Evening Rain")."""
    if request.target and _same_language(request, turn):
        words = found.words or request.target
        if found.row:
            return (
                f"the {words} of {found.row}"
                if request.english
                else f"{found.row}的{words}"
            )
        return f"the {words}" if request.english else words
    label = str(element.get("label") or element.get("id"))
    return (
        turn.tr(f"{found.row}的{label}", f"{label} of {found.row}") if found.row else label
    )


def _color_words(request: UiRequest, turn: Turn) -> str:
    """The colour as the user said it, or its name in the answer's language."""
    gradient = bool(request.color and request.color.startswith("linear-gradient("))
    if _same_language(request, turn) or not request.color:
        words = request.color_words
        return f"a {words}" if gradient and request.english else words
    if gradient:
        return turn.tr("渐变色", "a gradient")
    return turn.tr(_COLOR_ZH.get(request.color, request.color), request.color)


# The desktop's own parts take only some operations: the background is recoloured
# (a colour or a gradient) and a window's title bar too; moving, hiding or turning
# them would take the windows or their handle along.
_PART_OPS = {"background": ("change_color",), "titlebar": ("change_color",)}


def part_takes(element: Mapping[str, Any], op: str) -> bool:
    """Whether `element` may take `op`: any control may; a part of the desktop (the
    background, a title bar) only what it is for."""
    kind = str(element.get("type") or "")
    return kind not in _PART_OPS or op in _PART_OPS[kind] or op == "restore"


def _part_refuses(
    request: UiRequest, element: Mapping[str, Any], name: str, turn: Turn
) -> Outcome | None:
    """Why `element`, a part of the desktop, cannot take `request`; None when it can."""
    if part_takes(element, request.op):
        return None
    return Outcome(
        False,
        turn.tr(
            f"{name}只能换颜色或渐变，例如“把{name}换成蓝色”。",
            f"{name[:1].upper()}{name[1:]} can only change colour or take a gradient, "
            f'e.g. "make {name} blue".',
        ),
    )


def plan_ui(request: UiRequest, snapshot: Mapping[str, Any] | None, turn: Turn) -> Outcome:
    """The commands and the answer for an element operation (not window/status)."""
    elements = list((snapshot or {}).get("elements") or [])
    if not elements:
        return Outcome(
            False,
            turn.tr(
                "还不知道桌面上有哪些元素，请先打开桌面再试。",
                "I do not know the desktop's layout yet: open the desktop first.",
            ),
        )
    if not request.target:
        return Outcome(
            False,
            turn.tr(
                "要操作哪个元素？例如“播放按钮”。", 'Which element? e.g. "the play button".'
            ),
        )
    found = find_element(request.target, elements)
    if found.element is not None:
        return _plan_one(request, found.element, found, snapshot or {}, turn)
    if found.elements and request.every and request.op != "move":
        return _plan_every(request, found, snapshot or {}, turn)
    if found.elements:
        return _ask_which(request, found, snapshot or {}, turn)
    no_songs = _no_songs(request, elements, turn)
    if no_songs is not None:
        return no_songs
    names = [str(e.get("label") or e.get("id")) for e in found.similar]
    if names:
        hint = turn.tr(
            f"名字相近的有：{'、'.join(names)}。", f" Similar names: {', '.join(names)}."
        )
    else:
        hint = turn.tr(
            "可以调整的还有：桌面背景、任务栏、窗口的标题栏。",
            " You can also change the background, the taskbar and a window's title bar.",
        )
    message = turn.tr(
        f"桌面上没有“{request.target}”。{hint}",
        f'There is no "{request.target}" on the desktop.{hint}',
    )
    return Outcome(False, message, candidates=names)


MUSIC_WINDOW = "win_music_app"


def _no_songs(
    request: UiRequest, elements: Sequence[Mapping[str, Any]], turn: Turn
) -> Outcome | None:
    """No play button because the music window lists no songs: said so, with its
    control that adds songs offered (a link to the desktop's place that opens that
    control's file chooser). None when that is not why."""
    if not means_play(request.target):
        return None
    window = next((e for e in elements if e.get("id") == MUSIC_WINDOW), None)
    if window is None or window.get("view") != "list" or window.get("items") != 0:
        return None
    add = next(
        (
            e
            for e in elements
            if e.get("window") == MUSIC_WINDOW and e.get("type") == "file"
        ),
        None,
    )
    offer = (
        [link(turn.tr("添加歌曲", "Add songs"), "add_songs", f"aios:files#{add['id']}")]
        if add is not None
        else []
    )
    message = turn.tr(
        "音乐应用里还没有歌曲，所以没有播放按钮。先添加歌曲吧。",
        "There is no play button because Music has no songs yet. Add some songs first.",
    )
    return Outcome(False, message, offer=offer)


def _plan_every(
    request: UiRequest, found: Found, snapshot: Mapping[str, Any], turn: Turn
) -> Outcome:
    """Several elements have the name and the user said all of them: each one."""
    count = len(found.elements)
    words = found.words or request.target
    group = f"{count} {words}s" if request.english else f"全部 {count} 个{words}"
    outcomes = [
        _plan_one(request, element, Found([element], words=group), snapshot, turn)
        for element in found.elements
    ]
    done = [o for o in outcomes if o.ok]
    if not done:
        return outcomes[0]
    commands = [command for outcome in done for command in outcome.commands]
    return Outcome(True, done[0].message, commands)


def _ask_which(
    request: UiRequest, found: Found, snapshot: Mapping[str, Any], turn: Turn
) -> Outcome:
    """Several elements have the name: ask which, one choice per element."""
    labels = describe(found.elements, snapshot.get("elements") or [])
    choices = []
    for label, element in zip(labels, found.elements, strict=True):
        picked = Found([element], words=found.words, row=label)
        choices.append(Choice(label, _plan_one(request, element, picked, snapshot, turn)))
    choices = [c for c in choices if c.outcome.ok]
    if not choices:  # none of them can do it: the first one's reason says why
        return _plan_one(request, found.elements[0], found, snapshot, turn)
    listed = [c.label for c in choices]
    message = turn.tr(
        f"有 {len(found.elements)} 个“{request.target}”：{'、'.join(listed)}。要哪一个？",
        f'{len(found.elements)} elements match "{request.target}": '
        f"{', '.join(listed)}. Which one?",
    )
    return Outcome(False, message, candidates=listed, choices=choices)


def _plan_one(
    request: UiRequest,
    element: Mapping[str, Any],
    found: Found,
    snapshot: Mapping[str, Any],
    turn: Turn,
) -> Outcome:
    """The commands and the answer for `request` on this one element."""
    ident = str(element["id"])
    name = _name(request, element, found, turn)
    op = request.op
    refused = _part_refuses(request, element, name, turn)
    if refused is not None:
        return refused
    if op == "move":
        return _move(request, element, snapshot, name, turn)
    if op == "resize":
        return _resize(request, element, name, turn)
    if op == "change_color" and not request.color:
        return Outcome(
            False,
            turn.tr(
                f"要把{name}换成什么颜色？例如“把{name}换成蓝色”或“换成蓝紫渐变”。",
                f'Which colour for {name}? e.g. "make {name} blue" or '
                '"a blue to purple gradient".',
            ),
        )
    if op == "change_color":
        command: dict[str, Any] = {
            "op": "change_color",
            "id": ident,
            "color": request.color,
        }
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
            f'Changed the text of {name} to "{request.text}"',
        )
        return Outcome(True, message, [command])
    return Outcome(False, turn.tr("我还不会这个操作。", "I do not know how to do that."))


def _resize(
    request: UiRequest, element: Mapping[str, Any], name: str, turn: Turn
) -> Outcome:
    """`request`'s new size for the element, or the scale it asks for (a quarter
    bigger when it names none)."""
    ident = str(element["id"])
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


def _move(
    request: UiRequest,
    element: Mapping[str, Any],
    snapshot: Mapping[str, Any],
    name: str,
    turn: Turn,
) -> Outcome:
    viewport = _area(snapshot, element)
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
                f"要把{name}移到哪里？例如“左上角”。", 'Where to? e.g. "to the top-left".'
            ),
        )
    occupant = None
    if request.position and element.get("type") != "window":
        x, y, occupant = _beside(element, x, y, request.position, snapshot)
    command = {"op": "move", "id": ident, "x": x, "y": y}
    if occupant is not None:
        there = _control_name(occupant, turn)
        message = turn.tr(
            f"已将{name}移到{where}，放在{there}旁边",
            f"Moved {name} to {where}, beside {there}",
        )
    else:
        message = turn.tr(f"已将{name}移到{where}", f"Moved {name} to {where}")
    return Outcome(True, message, [command])


def _rect(element: Mapping[str, Any]) -> tuple[float, float, float, float]:
    return (
        float(element.get("x") or 0),
        float(element.get("y") or 0),
        float(element.get("width") or 0),
        float(element.get("height") or 0),
    )


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return (
        a[0] < b[0] + b[2]
        and b[0] < a[0] + a[2]
        and a[1] < b[1] + b[3]
        and b[1] < a[1] + a[3]
    )


def _beside(
    element: Mapping[str, Any],
    x: float,
    y: float,
    position: str,
    snapshot: Mapping[str, Any],
) -> tuple[float, float, Mapping[str, Any] | None]:
    """Where `element` goes at (x, y) without covering a control moved there before:
    below it (above it at the bottom), and below that one in turn; the first control
    it was put beside, or None when the place was free."""
    ident = element.get("id")
    placed = [
        other
        for other in snapshot.get("elements") or []
        if other.get("id") != ident
        and "move" in (other.get("changed") or [])
        and other.get("type") != "window"
        and other.get("visible", True) is not False
    ]
    width, height = _rect(element)[2:]
    upward = position.startswith("bottom")
    first = None
    for _ in range(len(placed)):
        hit = next((o for o in placed if _overlap((x, y, width, height), _rect(o))), None)
        if hit is None:
            break
        first = first or hit
        top, tall = _rect(hit)[1], _rect(hit)[3]
        y = plain_number(top - height - GAP if upward else top + tall + GAP)
    return x, y, first


# the desktop's own parts, as each language calls them (their labels are Chinese)
_PART_NAMES = {
    "desktop": ("桌面背景", "the background"),
    "taskbar": ("任务栏", "the taskbar"),
    "command_bar": ("指令栏", "the command bar"),
    "start_menu": ("开始菜单", "the start menu"),
    "clock": ("时钟", "the clock"),
    "tray": ("系统托盘", "the tray"),
}


def shown_name(
    element: Mapping[str, Any], elements: Sequence[Mapping[str, Any]], turn: Turn
) -> str:
    """An element as the screen shows it, in the answer's language: a part of the
    desktop ("the taskbar", "音乐应用的标题栏"), a window, or a control in its row."""
    ident = str(element.get("id") or "")
    if ident in _PART_NAMES:
        return turn.tr(*_PART_NAMES[ident])
    windows = {str(e.get("id")): str(e.get("label") or "") for e in elements}
    if element.get("type") == "titlebar":
        window = windows.get(str(element.get("window")), "")
        return turn.tr(f"{window}的标题栏", f"the title bar of {window}")
    if element.get("type") == "window":
        return str(element.get("label") or ident)
    return _control_name(element, turn)


def _control_name(element: Mapping[str, Any], turn: Turn) -> str:
    """A control as the screen shows it: "晴天的播放按钮", "the Play button of Evening Rain"."""
    label = str(element.get("label") or element.get("id"))
    row = str(element.get("row") or "")
    button = element.get("type") == "button"
    zh = label + ("按钮" if button and not label.endswith("按钮") else "")
    en = f"the {label} button" if button else f"the {label}"
    return turn.tr(f"{row}的{zh}" if row else zh, f"{en} of {row}" if row else en)


_WINDOW_WORDS = {
    "open_window": ("已打开", "Opened"),
    "close_window": ("已关闭", "Closed"),
    "focus_window": ("已切换到", "Switched to"),
    "maximize_window": ("已最大化", "Maximised"),
    "minimize_window": ("已最小化", "Minimised"),
}


def _installed_names(turn: Turn) -> list[str]:
    """The names of every installed app in the user's language, as the controller
    lists them for this call (the shipped ones when it lists none)."""
    listed = turn.context.get("installed_apps")
    names = [
        str(app["name"])
        for app in (listed if isinstance(listed, list) else [])
        if isinstance(app, dict) and app.get("name")
    ]
    if names:
        return names
    return list((APP_NAMES if turn.language == "zh-CN" else APP_NAMES_EN).values())


def plan_window(
    request: UiRequest, snapshot: Mapping[str, Any] | None, turn: Turn
) -> Outcome:
    """open/close/focus/maximise/minimise an app's window; "关闭任务栏" (not an app)
    hides the element."""
    elements = list((snapshot or {}).get("elements") or [])
    op = request.window_op or "open_window"
    app = resolve_app(request.target, elements)
    if app is None:
        if elements and op in ("open_window", "close_window"):
            fallback = UiRequest(
                "show" if op == "open_window" else "hide", request.target, request.english
            )
            if find_element(request.target, elements).element is not None:
                return plan_ui(fallback, snapshot, turn)
        installed = _installed_names(turn)
        return Outcome(
            False,
            turn.tr(
                f"没有找到应用“{request.target}”。已安装：{'、'.join(installed)}",
                f'No app called "{request.target}". Installed: {", ".join(installed)}',
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
