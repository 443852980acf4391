"""A skill's `allowed-tools`, held by the executor for the rest of one turn.

When an app's agent loop invokes a skill (the `skill` tool) within a turn (the
`turn_id` its calls carry: one user request), `SkillScopes.begin` records the tools
the skill allows for that app and session; every later call of the same turn is
checked (`check`) and a tool outside the list fails with `not_allowed_by_skill`. An
empty list, or one naming no tool there is, allows no tool at all — never every
tool. A skill that states no `allowed-tools` does not narrow anything. A call of a
new turn of that session ends the scope; calls without a turn id (a plan the
controller reviewed, which the loop checked before asking) are not part of it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

from aios_protocol.errors import ToolFailed

__all__ = ["NotAllowedBySkill", "SkillScopes"]


class NotAllowedBySkill(ToolFailed):
    code = "not_allowed_by_skill"
    http_status = 403


@dataclass(frozen=True)
class _Scope:
    turn_id: str
    skill: str
    allowed: frozenset[str]


class SkillScopes:
    """The scopes in force, one per (app, session)."""

    def __init__(self) -> None:
        self._scopes: dict[tuple[str, str], _Scope] = {}
        self._lock = threading.Lock()

    def begin(
        self,
        app_id: str,
        session_id: str | None,
        turn_id: str | None,
        skill: str,
        allowed: Iterable[str] | None,
    ) -> None:
        """The skill `skill` now limits the turn to `allowed` (None: no limit)."""
        if not turn_id or allowed is None:
            return
        scope = _Scope(turn_id, skill, frozenset(allowed))
        with self._lock:
            self._scopes[(app_id, session_id or "")] = scope

    def check(
        self, app_id: str, session_id: str | None, turn_id: str | None, tool: str
    ) -> None:
        """Raise `NotAllowedBySkill` for a tool the turn's skill does not allow."""
        if not turn_id:
            return
        key = (app_id, session_id or "")
        with self._lock:
            scope = self._scopes.get(key)
            if scope is None:
                return
            if scope.turn_id != turn_id:  # a new request: the skill's turn is over
                del self._scopes[key]
                return
        if tool not in scope.allowed:
            allowed = ", ".join(sorted(scope.allowed)) or "none"
            raise NotAllowedBySkill(
                f"{tool} is not allowed while following the skill {scope.skill!r} "
                f"(its allowed-tools: {allowed})"
            )
