"""UI commands from the LLM, for phrasings the rules of `phrases` cannot resolve.

"把播放键请到屏幕的西北方向" has no rule; with a model configured, ONE chat call in
JSON mode is given the desktop's UI snapshot (each element's id, type, label,
geometry and the row it acts on, the viewport, the app ids whose windows can be
opened) and the allowed desktop commands, and answers `{"commands": [...]}`. Nothing the model says is
trusted: every command is validated with the wire protocol's `UICommand` models,
must name an element id (or, for window commands, an app id) that is in the
snapshot, and gets its numbers kept on screen; anything else is discarded. The
answer's sentence is written here from the commands that survived, never taken
from the model. `commands_from_llm` never raises: a model that fails, answers
malformed JSON or nothing valid yields no commands and a short `note`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from aios_sdk.errors import user_message
from aios_sdk.protocol import UI_OPS, WINDOW_OPS, UICommand

from .targets import APP_NAMES, part_takes, plain_number, viewport_size

__all__ = ["LlmCommands", "commands_from_llm", "describe", "snapshot_ids"]

MAX_COMMANDS = 10
MAX_ELEMENTS = 120
MAX_TEXT = 200
_COLOR = re.compile(r"^[#a-zA-Z0-9(),.%\s-]{1,64}$")
_UI_COMMAND: TypeAdapter[Any] = TypeAdapter(UICommand)
_FIELDS = ("op", "id", "x", "y", "width", "height", "color", "text", "degrees")

SYSTEM_PROMPT = """你是桌面的系统控制小AI。把用户的一句话变成桌面 UI 命令。
只能使用下面“元素”里出现的 id（窗口命令用“应用”里的 id），不要编造 id。
可用的命令（坐标是元素左上角的像素位置，视口 {width}×{height}）：
{{"op": "move", "id": "<元素id>", "x": 数, "y": 数}}
{{"op": "resize", "id": "<元素id>", "width": 数, "height": 数}}
{{"op": "hide", "id": "<元素id>"}}
{{"op": "show", "id": "<元素id>"}}
{{"op": "change_color", "id": "<元素id>", "color": "<CSS 颜色>"}}
{{"op": "change_text", "id": "<元素id>", "text": "<新文字>"}}
{{"op": "rotate", "id": "<元素id>", "degrees": 数}}
{{"op": "open_window" | "close_window" | "focus_window" | "maximize_window" | "minimize_window", "id": "<应用id>"}}
只输出一个 JSON 对象：{{"commands": [ … ]}}；做不到或不确定时输出 {{"commands": []}}。"""


@dataclass
class LlmCommands:
    """Validated commands (maybe none), the sentence to say, and a failure note."""

    commands: list[dict[str, Any]] = field(default_factory=list)
    message: str = ""
    note: str = ""
    declined: bool = False  # the model said this is no change to the desktop


def snapshot_ids(
    snapshot: Mapping[str, Any] | None,
) -> tuple[dict[str, Mapping[str, Any]], dict[str, str]]:
    """(element id → element, app id → name) as the snapshot shows them.

    App ids come from the desktop's own element ids: `win_<app>` (an open window)
    and `task_<app>` (a taskbar icon).
    """
    elements: dict[str, Mapping[str, Any]] = {}
    apps: dict[str, str] = {}
    for element in list((snapshot or {}).get("elements") or []):
        if not isinstance(element, Mapping) or not isinstance(element.get("id"), str):
            continue
        ident = element["id"]
        elements.setdefault(ident, element)
        for prefix in ("win_", "task_"):
            if ident.startswith(prefix) and len(ident) > len(prefix):
                app_id = ident[len(prefix) :]
                label = str(element.get("label") or "").strip()
                apps.setdefault(app_id, label or APP_NAMES.get(app_id, app_id))
    return elements, apps


def _prompt(
    instruction: str,
    snapshot: Mapping[str, Any],
    elements: Mapping[str, Mapping[str, Any]],
    apps: Mapping[str, str],
) -> list[dict[str, str]]:
    width, height = viewport_size(snapshot)
    rows = [
        json.dumps(
            {
                "id": ident,
                "type": str(e.get("type") or ""),
                "label": str(e.get("label") or "")[:60],
                "x": e.get("x", 0),
                "y": e.get("y", 0),
                "width": e.get("width", 0),
                "height": e.get("height", 0),
                "visible": e.get("visible", True),
                # the row a control acts on tells the model which 播放 is which
                **({"row": str(e["row"])[:60]} if e.get("row") else {}),
            },
            ensure_ascii=False,
        )
        for ident, e in list(elements.items())[:MAX_ELEMENTS]
    ]
    app_rows = [f"{app_id}（{name}）" for app_id, name in apps.items()]
    user = (
        "元素：\n"
        + "\n".join(rows)
        + "\n应用："
        + ("、".join(app_rows) if app_rows else "（无）")
        + f"\n指令：{instruction}"
    )
    system = SYSTEM_PROMPT.format(width=plain_number(width), height=plain_number(height))
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _finite(*values: Any) -> bool:
    return all(isinstance(v, int | float) and math.isfinite(v) for v in values)


def _checked(
    raw: Any,
    elements: Mapping[str, Mapping[str, Any]],
    apps: Mapping[str, str],
    viewport: tuple[float, float],
) -> dict[str, Any] | None:
    """One model command as the desktop may receive it, or None to discard it."""
    if not isinstance(raw, Mapping):
        return None
    fields = {k: v for k, v in raw.items() if k in _FIELDS}  # drop "reason" and such
    try:
        command = _UI_COMMAND.validate_python(fields).model_dump(mode="json")
    except ValidationError:
        return None
    op, ident = command["op"], command["id"]
    if op in WINDOW_OPS:
        return command if ident in apps else None
    if op not in UI_OPS or ident not in elements or not part_takes(elements[ident], op):
        return None  # not on screen, or a part of the desktop that cannot take it
    vw, vh = viewport
    if op == "move":
        if not _finite(command["x"], command["y"]):
            return None
        command["x"] = plain_number(min(max(0.0, command["x"]), max(0.0, vw - 20)))
        command["y"] = plain_number(min(max(0.0, command["y"]), max(0.0, vh - 20)))
    elif op == "resize":
        w, h = command["width"], command["height"]
        if not _finite(w, h) or w <= 0 or h <= 0:
            return None
        command["width"], command["height"] = (
            plain_number(min(w, vw)),
            plain_number(min(h, vh)),
        )
    elif op == "rotate":
        if not _finite(command["degrees"]):
            return None
        command["degrees"] = plain_number(math.fmod(command["degrees"], 360.0))
    elif op == "change_color":
        if not _COLOR.match(command["color"]):
            return None
    elif op == "change_text":
        command["text"] = command["text"][:MAX_TEXT]
    return command


def describe(
    command: Mapping[str, Any],
    elements: Mapping[str, Mapping[str, Any]],
    apps: Mapping[str, str],
    english: bool,
) -> str:
    """The sentence for one validated command, e.g. "已将播放移到 (20, 20)"."""
    op, ident = command["op"], str(command["id"])
    element = elements.get(ident) or {}
    name = str(element.get("label") or ident) if op not in WINDOW_OPS else apps[ident]
    if english:
        return {
            "move": lambda: f"Moved {name} to ({command['x']}, {command['y']})",
            "resize": lambda: f"Resized {name} to {command['width']}×{command['height']}",
            "hide": lambda: f"Hid {name}",
            "show": lambda: f"Showed {name}",
            "change_color": lambda: f"Made {name} {command['color']}",
            "change_text": lambda: f'Changed the text of {name} to "{command["text"]}"',
            "rotate": lambda: f"Rotated {name} to {command['degrees']} degrees",
            "open_window": lambda: f"Opened {name}",
            "close_window": lambda: f"Closed {name}",
            "focus_window": lambda: f"Switched to {name}",
            "maximize_window": lambda: f"Maximised {name}",
            "minimize_window": lambda: f"Minimised {name}",
        }[op]()
    return {
        "move": lambda: f"已将{name}移到 ({command['x']}, {command['y']})",
        "resize": lambda: f"已将{name}调整为 {command['width']}×{command['height']}",
        "hide": lambda: f"已隐藏{name}",
        "show": lambda: f"已显示{name}",
        "change_color": lambda: f"已将{name}改成{command['color']}",
        "change_text": lambda: f"已将{name}的文字改为“{command['text']}”",
        "rotate": lambda: f"已将{name}旋转{command['degrees']}度",
        "open_window": lambda: f"已打开{name}",
        "close_window": lambda: f"已关闭{name}",
        "focus_window": lambda: f"已切换到{name}",
        "maximize_window": lambda: f"已最大化{name}",
        "minimize_window": lambda: f"已最小化{name}",
    }[op]()


# why the model's answer was of no use, when it answered (a failed call is said by
# the sentence table of the error codes)
_UNUSED = {
    "no_command": (
        "语言模型没有给出可以做的操作。",
        "The language model suggested nothing to do.",
    ),
    "no_valid_command": (
        "语言模型给出的操作在这个桌面上做不了。",
        "The language model suggested changes this desktop cannot make.",
    ),
}


def _note(code: str, english: bool) -> str:
    """The sentence put before the rules' answer when the model did not help."""
    if code in _UNUSED:
        return _UNUSED[code][1] + " " if english else _UNUSED[code][0]
    if english:
        return user_message(code, "en-US") + " "
    return user_message(code, "zh-CN")


def commands_from_llm(
    llm: Any | None, instruction: str, snapshot: Mapping[str, Any] | None, english: bool
) -> LlmCommands:
    """The model's commands for `instruction`, validated against `snapshot`."""
    elements, apps = snapshot_ids(snapshot)
    if llm is None or not (elements or apps):
        return LlmCommands()
    try:
        if not getattr(llm, "available", False):
            return LlmCommands()
        answer = llm.chat(_prompt(instruction, snapshot or {}, elements, apps), json=True)
    except Exception as exc:  # the model failing is not the user's error
        return LlmCommands(note=_note(getattr(exc, "code", "") or "llm_error", english))
    raw_commands = answer.get("commands") if isinstance(answer, Mapping) else None
    if not isinstance(raw_commands, Sequence) or isinstance(raw_commands, str):
        return LlmCommands(note=_note("llm_bad_reply", english))
    viewport = viewport_size(snapshot or {})
    commands: list[dict[str, Any]] = []
    for raw in list(raw_commands)[:MAX_COMMANDS]:
        command = _checked(raw, elements, apps, viewport)
        if command is not None and command not in commands:
            commands.append(command)
    if not commands:
        code = "no_valid_command" if raw_commands else "no_command"
        return LlmCommands(note=_note(code, english), declined=not raw_commands)
    sentences = [describe(c, elements, apps, english) for c in commands]
    return LlmCommands(commands, ("; " if english else "；").join(sentences))
