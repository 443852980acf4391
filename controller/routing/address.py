"""Who an instruction speaks to: an app named at its start takes it alone.

"智能助手，帮我写一首关于秋天的诗" is for the assistant, whatever words of other apps
follow. An app is addressed when the instruction begins with one of its names —
optionally after a greeting ("hey", "嗨") and a word that hands the job over ("让",
"请", "用", "帮我用", "ask", "tell", "use the") — and the name is not the object of something
else: not followed by 的 / 窗口 / window / 's ("关闭音乐应用的窗口" is about a window).
An app's names are its manifest `name` and those of its keywords that name it as an
app (they contain 应用 / 助手 / app / assistant / agent: the assistant's "assistant").
A nickname ("小助手") or a name further in is ordinary evidence for the scorer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from controller.routing.text import normalize

if TYPE_CHECKING:
    from controller.routing.router import AppProfile

__all__ = ["Addressee", "Addressing", "names"]

_APP_WORDS = ("应用", "助手", "app", "assistant", "agent")
_GREETING = r"(?:(?:hey|hi|ok|okay|嗨|嘿)[\s,，!！]*)?"
_HANDOVER = (
    r"(?:(?:(?:请|麻烦你?)?帮我\s*(?:用|使用)|请让|让|请|叫|用|使用|麻烦|由)\s*"
    r"|(?:please\s+)?(?:ask|tell|let|have|use|get)\s+(?:the\s+|my\s+)?)?"
)
# after the name: not the name of something else ("…的窗口", "…'s window")
_NOT_OBJECT = r"(?!\s*(?:的|窗口|界面|图标|'s\b|window|icon))"


class Addressee(NamedTuple):
    app_id: str
    name: str  # as said, normalised


def names(app: AppProfile) -> tuple[str, ...]:
    """The names an app answers to: its manifest name and app-naming keywords."""
    found = [app.name]
    for keyword in app.keywords:
        lowered = keyword.lower()
        if any(word in lowered for word in _APP_WORDS):
            found.append(keyword)
    return tuple(dict.fromkeys(n.strip() for n in found if n.strip()))


class Addressing:
    """The names of a set of apps, as one pattern matched at an instruction's start."""

    def __init__(self, apps: Sequence[AppProfile]) -> None:
        self._owner: dict[str, str] = {}
        for app in apps:
            for name in names(app):
                self._owner.setdefault(normalize(name), app.app_id)
        alternatives = "|".join(
            re.escape(name) + (r"\b" if name[-1].isascii() and name[-1].isalnum() else "")
            for name in sorted(self._owner, key=len, reverse=True)
        )
        self._pattern = (
            re.compile(rf"^\s*{_GREETING}{_HANDOVER}(?P<name>{alternatives}){_NOT_OBJECT}")
            if alternatives
            else None
        )

    def addressee(self, text: str) -> Addressee | None:
        """The app `text` is addressed to, or None."""
        said = self._pattern.match(normalize(text)) if self._pattern else None
        if said is None:
            return None
        name = said.group("name")
        return Addressee(self._owner[name], name)
