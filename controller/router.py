"""Intent routing: which app handles which part of an instruction (S-11, S-40).

The interface (`AppProfile`, `PlannedTask`, `RoutePlan`, `Router`) is what the
pipeline depends on; `DeterministicRouter` answers without an LLM. An LLM router
plugs in behind the same interface for instructions the deterministic one is not
confident about.

(Interface fixed; the deterministic implementation below is a placeholder that the
routing work replaces.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "AppProfile",
    "DeterministicRouter",
    "PlannedTask",
    "RoutePlan",
    "Router",
    "no_match_message",
]


@dataclass(frozen=True)
class AppProfile:
    """What the router knows of one installed, routable app (from its manifest)."""

    app_id: str
    name: str
    description: str = ""
    keywords: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()


@dataclass
class PlannedTask:
    task_id: str  # "t1", "t2", …
    app_id: str
    instruction: str
    depends_on: list[str] = field(default_factory=list)


@dataclass
class RoutePlan:
    """The tasks of one instruction; no tasks means no app matched."""

    tasks: list[PlannedTask]
    confidence: float  # 0..1
    llm_calls: int = 0
    reason: str = ""


class Router(Protocol):
    def route(self, text: str, apps: Sequence[AppProfile]) -> RoutePlan: ...


def no_match_message(apps: Sequence[AppProfile]) -> str:
    """The reply when no app matches: what the installed apps can do."""
    if not apps:
        return "没有已安装的应用。 No apps are installed."
    lines = [f"{app.name}: {app.description}" for app in apps]
    return "我不确定该交给哪个应用。已安装的应用可以：\n" + "\n".join(lines)


class DeterministicRouter:
    """Placeholder: picks the app with the most keyword hits; one task."""

    def route(self, text: str, apps: Sequence[AppProfile]) -> RoutePlan:
        lowered = text.lower()
        best, best_hits = None, 0
        for app in apps:
            hits = sum(1 for kw in app.keywords if kw.lower() in lowered)
            if hits > best_hits:
                best, best_hits = app, hits
        if best is None:
            return RoutePlan(tasks=[], confidence=0.0, reason=no_match_message(apps))
        return RoutePlan(
            tasks=[PlannedTask("t1", best.app_id, text)], confidence=min(1.0, best_hits / 2)
        )
