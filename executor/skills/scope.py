"""A skill's `allowed-tools`, held by the executor for the rest of one turn.

When an app's agent loop invokes a skill (the `skill` tool) within a turn (the
`turn_id` its calls carry: one user request), `SkillScopes.begin` records the tools
the skill allows for that app and session; every later call of the same turn is
checked (`check`) and a tool outside the list fails with `not_allowed_by_skill`. An
empty list, or one naming no tool there is, allows no tool at all — never every
tool. A skill that states no `allowed-tools` does not narrow anything. A call of a
new turn of that session ends the scope; calls without a turn id (a plan the
controller reviewed, which the loop checked before asking) are not part of it.

A skill marked `context: fork` gets a turn of its own (`sub_turn`, minted here: the
parent's turn, a dot and 16 hex digits) for the sub-agent that follows it. A call in
such a turn that the executor holds no scope for — the turn is over, or its scope was
lost — fails closed (`not_allowed_by_skill`), never runs unheld. The scopes are kept
in `<state_dir>/skill_scopes.json`, so a sub-agent paused for the user's yes is still
held to its skill after a restart.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from aios_protocol.errors import ToolFailed
from aios_runtime.files import atomic_write_text, set_aside

__all__ = ["NotAllowedBySkill", "SkillScopes", "is_sub_turn", "sub_turn"]

KEPT = 256  # scopes kept at most (the oldest are dropped first)
_SUB_TURN = re.compile(r".+\.[0-9a-f]{16}")


class NotAllowedBySkill(ToolFailed):
    code = "not_allowed_by_skill"
    http_status = 403


def sub_turn(turn_id: str) -> str:
    """A new turn of its own for the sub-agent of a skill used in `turn_id`."""
    return f"{turn_id[:60]}.{secrets.token_hex(8)}"


def is_sub_turn(turn_id: str) -> bool:
    """Whether `turn_id` has the form of a skill sub-agent's turn (`sub_turn`)."""
    return _SUB_TURN.fullmatch(turn_id) is not None


@dataclass(frozen=True)
class _Scope:
    turn_id: str
    skill: str
    allowed: frozenset[str]


class SkillScopes:
    """The scopes in force, one per (app, session); kept in `path` when given."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._scopes: dict[tuple[str, str], _Scope] = self._load()

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
        key = (app_id, session_id or "")
        with self._lock:
            self._scopes.pop(key, None)  # the newest last: the oldest go first
            self._scopes[key] = scope
            while len(self._scopes) > KEPT:
                del self._scopes[next(iter(self._scopes))]
            self._save()

    def check(
        self, app_id: str, session_id: str | None, turn_id: str | None, tool: str
    ) -> None:
        """Raise `NotAllowedBySkill` for a tool the turn's skill does not allow, and
        for any tool in a skill sub-agent's turn that no scope holds."""
        if not turn_id:
            return
        key = (app_id, session_id or "")
        with self._lock:
            scope = self._scopes.get(key)
            if scope is None or scope.turn_id != turn_id:
                if is_sub_turn(turn_id):
                    raise NotAllowedBySkill(
                        f"{tool} did not run: the turn of the skill's sub-agent is over "
                        "or no longer known here"
                    )
                if scope is not None:  # a new request: the skill's turn is over
                    del self._scopes[key]
                    self._save()
                return
        if tool not in scope.allowed:
            allowed = ", ".join(sorted(scope.allowed)) or "none"
            raise NotAllowedBySkill(
                f"{tool} is not allowed while following the skill {scope.skill!r} "
                f"(its allowed-tools: {allowed})"
            )

    # ------------------------------------------------------------- the file

    def _load(self) -> dict[tuple[str, str], _Scope]:
        if self._path is None or not self._path.exists():
            return {}
        try:
            rows = json.loads(self._path.read_text(encoding="utf-8"))
            return {
                (str(row["app_id"]), str(row["session_id"])): _Scope(
                    str(row["turn_id"]),
                    str(row["skill"]),
                    frozenset(str(name) for name in row["allowed"]),
                )
                for row in rows
            }
        except (OSError, ValueError, TypeError, KeyError) as exc:
            # the sub-agents' turns it held are no longer known: their calls fail closed
            set_aside(self._path, f"unreadable skill scopes: {exc}")
            return {}

    def _save(self) -> None:
        if self._path is None:
            return
        rows = [
            {
                "app_id": app_id,
                "session_id": session_id,
                **asdict(scope),
                "allowed": sorted(scope.allowed),
            }
            for (app_id, session_id), scope in self._scopes.items()
        ]
        atomic_write_text(self._path, json.dumps(rows, ensure_ascii=False), mode=0o600)
