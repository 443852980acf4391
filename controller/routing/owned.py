"""Knowledge questions about what an app shows or owns are that app's.

A request for knowledge about a topic is the assistant's ("介绍一下爵士乐", "tell me
about Jay Chou": `subject`), whatever app its words sound like. When the topic is
something an installed app shows or owns, the app answers better than a model
would: "说说现在的CPU占用" and "tell me about my disk usage" want the live figures the
system app shows, "介绍一下技能" the skills list, "介绍一下代码应用" and "tell me
about the music app" the app itself.

What an app owns comes from its manifest: its `subjects` (the things it shows or
keeps: "CPU", "内存", "技能", "曲库", "my songs") and its names as an app's (a name
that says it is an app, "代码应用", or any name followed by 应用 / app: "music
app"). A topic is an app's when it starts with one of them, after words that only
say whose or which it is ("现在的", "我的", "the", "my", "current"): "说说现在的CPU
占用" is the system app's, "介绍一下沟通技能" (a skill of people) and "介绍 Python"
(a language: general knowledge, the code app only runs it) stay the assistant's. An
English subject followed by "of" names a general thing ("the process of
photosynthesis"), not the app's. Apps' words that are only loosely theirs ("音乐",
"jazz", "play") are keywords, not subjects: a question about jazz stays a question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from controller.routing.address import names
from controller.routing.text import normalize

if TYPE_CHECKING:
    from controller.routing.router import AppProfile

__all__ = ["Owner", "Ownership"]

_APP_WORDS = ("应用", "助手", "app", "assistant", "agent")
# words before a topic that only say whose, when or which it is
_WHOSE = re.compile(
    r"\s*(?:(?:我们|我|你|咱们|这台电脑|电脑|本机|系统|现在|当前|目前|实时)的?"
    r"|这个|那个|这些|那些|一下"
    r"|(?:the|my|our|your|this|these|that|those|current|present|computer's|system's)(?![a-z0-9]))\s*"
)


class Owner(NamedTuple):
    app_id: str
    term: str  # the subject or name the topic starts with, normalised


def _terms(app: AppProfile) -> list[str]:
    """What the app shows or owns: its subjects, and its names as an app's."""
    found = list(app.subjects)
    for name in (*names(app), *app.names.values()):
        lowered = name.lower()
        if any(word in lowered for word in _APP_WORDS):
            found.append(name)
        else:  # "Music" alone is music; "Music app" is the app
            found.extend((f"{name}应用", f"{name} app"))
    return [normalize(term).strip() for term in found if term.strip()]


class Ownership:
    """The subjects and app names of a set of apps, matched at a topic's start."""

    def __init__(self, apps: Sequence[AppProfile]) -> None:
        self._owner: dict[str, str] = {}
        for app in apps:
            for term in _terms(app):
                self._owner.setdefault(term, app.app_id)
        alternatives = "|".join(
            re.escape(term) + (r"(?![a-z0-9])(?!\s+of\b)" if term[-1].isascii() else "")
            for term in sorted(self._owner, key=len, reverse=True)
        )
        self._pattern = re.compile(f"(?:{alternatives})") if alternatives else None

    def owner(self, topic: str) -> Owner | None:
        """The app whose subject or name `topic` starts with (maybe after words that
        only say whose or which it is), or None."""
        if self._pattern is None:
            return None
        said = normalize(topic)
        start = len(said) - len(said.lstrip())
        while True:
            found = self._pattern.match(said, start)
            if found is not None:
                return Owner(self._owner[found.group(0)], found.group(0))
            whose = _WHOSE.match(said, start)
            if whose is None or whose.end() == start:
                return None
            start = whose.end()
