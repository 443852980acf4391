"""A skill's `allowed-tools`, held by the executor for the rest of one turn.

A turn is what an app's agent loop does for one user request; its calls carry its
`turn_id`. The loop announces each new request (`new_turn`, the `POST /turns` route):
that, and nothing else, ends the holds of the request before it. When the loop
invokes a skill (the `skill` tool) in a turn, `SkillScopes.begin` holds that turn to
the tools the skill allows, narrowed to any hold already on it — a hold is never
loosened; every later call of the turn is checked (`check`) and a tool outside the
list fails with `not_allowed_by_skill`. An empty list, or one naming no tool there
is, allows no tool at all — never every tool. A skill that states no `allowed-tools`
narrows nothing. Calls without a turn id (a plan the controller reviewed, which the
loop checked before asking) are not part of a turn.

A sub-agent that outlives its call — a skill marked `context: fork` (whose turn is
minted here, `sub_turn`) or a background `task` (the loop's, announced with its
parent) — has a turn of its own, `<parent>.<16 hex digits>`, held to its parent's
limits at the time it started (`fork`) and narrowed further by a skill of its own. A
background sub-agent's turn lasts over the user's next requests; a skill's sub-agent's
ends with the request. A call whose turn the executor does not know — a request's
turn that is over or was never announced — is held to every hold in force for that
app and session (the narrowest of them); one in a sub-agent's turn it does not know
fails closed. The holds are kept in `<state_dir>/skill_scopes.json`, so a sub-agent
paused for the user's yes is still held to its skill after a restart.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from aios_protocol.errors import ToolFailed
from aios_runtime.files import atomic_write_text, read_state

__all__ = ["NotAllowedBySkill", "SkillScopes", "is_sub_turn", "sub_turn"]

KEPT = 256  # turns kept at most (the oldest are dropped first)
_SUB_TURN = re.compile(r".+\.[0-9a-f]{16}")


class NotAllowedBySkill(ToolFailed):
    code = "not_allowed_by_skill"
    http_status = 403


def sub_turn(turn_id: str) -> str:
    """A new turn of its own for a sub-agent started in `turn_id`."""
    return f"{turn_id[:60]}.{secrets.token_hex(8)}"


def is_sub_turn(turn_id: str) -> bool:
    """Whether `turn_id` has the form of a sub-agent's turn (`sub_turn`)."""
    return _SUB_TURN.fullmatch(turn_id) is not None


@dataclass(frozen=True)
class _Hold:
    skill: str  # the last skill that narrowed it ("" while none did)
    allowed: frozenset[str] | None  # None: no limit
    lasting: bool = False  # a background sub-agent's: kept over the next requests


_Key = tuple[str, str, str]  # app, session, turn


class SkillScopes:
    """The turns known per (app, session) and their holds; kept in `path` when given."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._turns: dict[_Key, _Hold] = self._load()

    def new_turn(self, app_id: str, session_id: str | None, turn_id: str) -> None:
        """The user's next request: the turns of the ones before end (their holds
        with them), except the background sub-agents' still running."""
        session = session_id or ""
        with self._lock:
            for key in [k for k in self._turns if k[:2] == (app_id, session)]:
                if not self._turns[key].lasting:
                    del self._turns[key]
            self._keep((app_id, session, turn_id), _Hold("", None))

    def fork(
        self,
        app_id: str,
        session_id: str | None,
        parent: str,
        child: str,
        *,
        lasting: bool = False,
    ) -> bool:
        """`child`, a sub-agent's turn, held to `parent`'s limits (a request's turn
        not known: to the narrowest in force); False, and nothing known of `child`,
        when it is not a sub-turn of `parent` or `parent` is a sub-agent's turn not
        known."""
        session = session_id or ""
        with self._lock:
            held = self._turns.get((app_id, session, parent))
            if not is_sub_turn(child) or not child.startswith(f"{parent[:60]}."):
                return False
            if held is None and is_sub_turn(parent):
                return False
            if held is None:
                held = _Hold("", self._narrowest(app_id, session))
            self._keep(
                (app_id, session, child), replace(held, lasting=lasting or held.lasting)
            )
            return True

    def begin(
        self,
        app_id: str,
        session_id: str | None,
        turn_id: str | None,
        skill: str,
        allowed: Iterable[str] | None,
    ) -> None:
        """The skill `skill` now limits the turn to `allowed` (None: no limit), within
        whatever already held it."""
        if not turn_id or allowed is None:
            return
        key = (app_id, session_id or "", turn_id)
        wanted = frozenset(allowed)
        with self._lock:
            held = self._turns.get(key)
            if held is None:  # a turn never announced: held to the narrowest too
                held = _Hold("", self._narrowest(app_id, session_id or ""))
            if held.allowed is not None:
                wanted &= held.allowed
            self._keep(key, _Hold(skill, wanted, held.lasting))

    def check(
        self, app_id: str, session_id: str | None, turn_id: str | None, tool: str
    ) -> None:
        """Raise `NotAllowedBySkill` for a tool the turn's holds do not allow: a
        known turn's own, every hold of the app and session for a turn not known,
        and any tool in a sub-agent's turn not known."""
        if not turn_id:
            return
        session = session_id or ""
        with self._lock:
            held = self._turns.get((app_id, session, turn_id))
            if held is None and is_sub_turn(turn_id):
                raise NotAllowedBySkill(
                    f"{tool} did not run: the sub-agent's turn is over or no longer "
                    "known here"
                )
            if held is None:  # a request's turn that is over, or never announced
                allowed = self._narrowest(app_id, session)
                skill = "in force for this session"
            else:
                allowed, skill = held.allowed, repr(held.skill)
        if allowed is not None and tool not in allowed:
            shown = ", ".join(sorted(allowed)) or "none"
            raise NotAllowedBySkill(
                f"{tool} is not allowed while following the skill {skill} "
                f"(its allowed-tools: {shown})"
            )

    def _narrowest(self, app_id: str, session: str) -> frozenset[str] | None:
        """What every hold of this app and session allows (None: none holds)."""
        narrowest: frozenset[str] | None = None
        for (app, sess, _turn), held in self._turns.items():
            if (app, sess) == (app_id, session) and held.allowed is not None:
                narrowest = held.allowed if narrowest is None else narrowest & held.allowed
        return narrowest

    def _keep(self, key: _Key, held: _Hold) -> None:
        """Record `key` (the newest last: the oldest go first) and save."""
        self._turns.pop(key, None)
        self._turns[key] = held
        while len(self._turns) > KEPT:
            del self._turns[next(iter(self._turns))]
        self._save()

    # ------------------------------------------------------------- the file

    def _load(self) -> dict[_Key, _Hold]:
        """The holds kept; a damaged file is set aside and named, and the turns it
        held are no longer known: held to the narrowest, or closed."""
        if self._path is None:
            return {}
        return read_state(self._path, _parse_holds, "a skill scopes file") or {}

    def _save(self) -> None:
        if self._path is None:
            return
        rows = [
            {
                "app_id": app_id,
                "session_id": session_id,
                "turn_id": turn_id,
                **asdict(held),
                "allowed": None if held.allowed is None else sorted(held.allowed),
            }
            for (app_id, session_id, turn_id), held in self._turns.items()
        ]
        atomic_write_text(self._path, json.dumps(rows, ensure_ascii=False), mode=0o600)


def _parse_holds(text: str) -> dict[_Key, _Hold]:
    rows = json.loads(text)
    if not isinstance(rows, list):
        raise TypeError(f"a JSON {type(rows).__name__}, not a list")
    return {
        (str(row["app_id"]), str(row["session_id"]), str(row["turn_id"])): _Hold(
            str(row["skill"]),
            None if row["allowed"] is None else frozenset(str(n) for n in row["allowed"]),
            bool(row.get("lasting")),
        )
        for row in rows
    }
