"""Paused tasks waiting for the user's decision (Ripple's permission pause, UFO's confirm).

When `permissions.PermissionPolicy` finds a risky step in a plan an app returned,
the pipeline does not send the plan to the executor. `ConfirmationGate.pause`
stores a `PendingConfirmation` — who asked (app, session, task), the exact plan,
the risky steps and one sentence per step saying exactly what would run — as one
JSON file `<state_dir>/confirmations/<id>.json` (written atomically, so the pause
survives a desktop reload and a controller restart), publishes a `confirm_request`
event and answers the task with a `confirm` view. `GET /api/confirmations` lists
what is pending; `POST /api/confirmations/<id>` with `allow_once`, `allow_always`
or `deny` claims it (exactly once) and the pipeline resumes that same step loop.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from aios_runtime.files import atomic_write_text
from aios_sdk.errors import InvalidRequest, NotFound
from aios_sdk.protocol import AppReply
from controller.events import EventBus
from controller.permissions.policy import RiskyStep

__all__ = [
    "DECISIONS",
    "ConfirmationGate",
    "PendingConfirmation",
    "confirm_reply",
    "denied_results",
]

DECISIONS = ("allow_once", "allow_always", "deny")
DENIED_CODE = "denied_by_user"
_ID_PREFIX = "conf_"
MAX_PENDING = 200


@dataclass
class PendingConfirmation:
    """Everything needed to show the question and to resume the paused step loop."""

    confirmation_id: str
    app_id: str
    app_name: str
    session_id: str
    summary: str
    steps: list[dict[str, Any]]  # the risky steps: step_id, tool, kind, sentence, command
    plan: list[dict[str, Any]]  # the whole plan of this round, exactly as the app wrote it
    round: int
    kind: str = "instruction"  # instruction | open | action
    task_id: str | None = None
    instruction: str | None = None
    action_request: dict[str, Any] | None = None
    upstream: list[dict[str, Any]] | None = None
    created: float = field(default_factory=time.time)

    def public(self) -> dict[str, Any]:
        """What the desktop sees (no resume internals beyond the plan itself)."""
        return {
            "confirmation_id": self.confirmation_id,
            "app_id": self.app_id,
            "app_name": self.app_name,
            "session_id": self.session_id,
            "task_id": self.task_id,
            "summary": self.summary,
            "steps": self.steps,
            "plan": self.plan,
            "decisions": list(DECISIONS),
            "created": self.created,
        }

    def risky(self) -> list[RiskyStep]:
        return [RiskyStep(**step) for step in self.steps]


def confirm_reply(pending: PendingConfirmation) -> AppReply:
    """The task's answer while it waits: a `confirm` view saying what would run."""
    return AppReply(
        status="ok",
        view_type="confirm",
        data=pending.public(),
        message=f"需要你的确认：{pending.summary}",
    )


def denied_results(plan: list[dict[str, Any]], risky: list[RiskyStep]) -> dict[str, Any]:
    """`tool_results` of a denied plan: nothing ran, every step an error `denied_by_user`."""
    asked = {step.step_id: step.sentence for step in risky}
    results: dict[str, Any] = {}
    for step in plan:
        step_id = int(step.get("step_id") or 0)
        reason = (
            f"用户拒绝了这一步：{asked[step_id]}"
            if step_id in asked
            else "没有执行：同一计划中的另一步被用户拒绝"
        )
        results[f"step_{step_id}"] = {
            "tool": str(step.get("tool") or ""),
            "status": "error",
            "result": None,
            "error": reason,
            "code": DENIED_CODE,
            "duration_ms": 0.0,
        }
    return results


class ConfirmationGate:
    """The pending confirmations on disk, their events, and claiming one exactly once."""

    def __init__(self, folder: Path, events: EventBus):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._events = events
        self._lock = threading.Lock()

    def _path(self, confirmation_id: str) -> Path:
        if not confirmation_id.startswith(_ID_PREFIX) or not confirmation_id[5:].isalnum():
            raise NotFound(f"no pending confirmation {confirmation_id!r}")
        return self.folder / f"{confirmation_id}.json"

    def pause(
        self,
        *,
        app_id: str,
        app_name: str,
        session_id: str,
        plan: list[dict[str, Any]],
        risky: list[RiskyStep],
        round_no: int,
        task_id: str | None,
        instruction: str | None,
        action_request: dict[str, Any] | None,
        upstream: list[dict[str, Any]] | None,
    ) -> AppReply:
        """Persist the question, announce it, and answer the task with a confirm view."""
        sentences = "；".join(step.sentence for step in risky)
        pending = PendingConfirmation(
            confirmation_id=f"{_ID_PREFIX}{secrets.token_hex(8)}",
            app_id=app_id,
            app_name=app_name,
            session_id=session_id,
            summary=f"应用「{app_name}」将要{sentences}",
            steps=[step.to_json() for step in risky],
            plan=plan,
            round=round_no,
            kind="action" if action_request else ("instruction" if task_id else "open"),
            task_id=task_id,
            instruction=instruction,
            action_request=action_request,
            upstream=upstream,
        )
        with self._lock:
            self._trim()
            atomic_write_text(
                self._path(pending.confirmation_id),
                json.dumps(asdict(pending), ensure_ascii=False, default=str),
                mode=0o600,
            )
        self._events.publish(
            "confirm_request", pending.public(), app_id=app_id, session_id=session_id
        )
        return confirm_reply(pending)

    def _trim(self) -> None:
        """Keep at most MAX_PENDING questions: the oldest go first."""
        files = sorted(
            self.folder.glob(f"{_ID_PREFIX}*.json"), key=lambda p: p.stat().st_mtime
        )
        for old in files[: max(0, len(files) - MAX_PENDING + 1)]:
            old.unlink(missing_ok=True)

    def _read(self, path: Path) -> PendingConfirmation | None:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return PendingConfirmation(**raw)
        except (OSError, ValueError, TypeError):
            return None

    def pending(self) -> list[PendingConfirmation]:
        """Every question still waiting, oldest first."""
        found = [self._read(p) for p in self.folder.glob(f"{_ID_PREFIX}*.json")]
        return sorted((p for p in found if p is not None), key=lambda p: p.created)

    def get(self, confirmation_id: str) -> PendingConfirmation:
        pending = self._read(self._path(confirmation_id))
        if pending is None:
            raise NotFound(f"no pending confirmation {confirmation_id!r}")
        return pending

    def claim(self, confirmation_id: str, decision: str) -> PendingConfirmation:
        """Take the question off the list (once: a second claim is `NotFound`)."""
        if decision not in DECISIONS:
            raise InvalidRequest(f"decision must be one of {', '.join(DECISIONS)}")
        path = self._path(confirmation_id)
        with self._lock:
            pending = self._read(path)
            if pending is None:
                raise NotFound(f"no pending confirmation {confirmation_id!r}")
            path.unlink(missing_ok=True)
        self._events.publish(
            "confirm_resolved",
            {"confirmation_id": confirmation_id, "decision": decision},
            app_id=pending.app_id,
            session_id=pending.session_id,
        )
        return pending
