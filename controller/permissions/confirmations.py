"""Paused tasks waiting for the user's decision before a risky step runs.

When `policy.PermissionPolicy` finds a risky step in a plan an app returned,
the pipeline does not send the plan to the executor. `ConfirmationGate.pause`
stores a `PendingConfirmation` — who asked (app, session, task), the exact plan,
the risky steps and one sentence per step saying exactly what would run, in the
reader's words (a tool's id and its developer's description are the step's
technical `detail`) — as one
JSON file `<state_dir>/confirmations/<id>.json` (written atomically, so the pause
survives a desktop reload and a controller restart), publishes a `confirm_request`
event and answers the task with a `confirm` view. `GET /api/confirmations` lists
what is pending; `POST /api/confirmations/<id>` with `allow_once`, `allow_always`
or `deny` claims it (exactly once) and the pipeline resumes that same step loop.
A question need not come from a paused plan: `ask` stores one of another `kind`
(the scheduler's `schedule`: a risky command job waits for the user's yes at its
creation, `job_id` naming it), shown and answered the same way; the answer goes to
the handler registered for that kind with `on_decision` instead of a step loop.
Every question belongs to the user whose session (or job) asked it (`user_id`);
`pending(user)` lists one user's only, and the desktop lists and answers the
owner's, so no user answers another's.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from aios_protocol.errors import InvalidRequest, NotFound
from aios_protocol.messages import AppReply
from aios_protocol.strings import user_message
from aios_runtime.files import atomic_write_text, read_state
from aios_runtime.users import OWNER
from controller.events import EventBus
from controller.permissions.policy import RiskyStep
from controller.pipeline.context import tr

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
    kind: str = "instruction"  # instruction | open | action | schedule
    task_id: str | None = None
    job_id: str | None = None  # kind schedule: the job waiting for the user's yes
    instruction: str | None = None
    action_request: dict[str, Any] | None = None
    upstream: list[dict[str, Any]] | None = None
    created: float = field(default_factory=time.time)
    user_id: str = OWNER  # whose question it is (the session's or the job's user)

    def public(self) -> dict[str, Any]:
        """What the desktop sees (no resume internals beyond the plan itself)."""
        return {
            "confirmation_id": self.confirmation_id,
            "app_id": self.app_id,
            "app_name": self.app_name,
            "session_id": self.session_id,
            "task_id": self.task_id,
            "kind": self.kind,
            "job_id": self.job_id,
            "summary": self.summary,
            "steps": self.steps,
            "plan": self.plan,
            "decisions": list(DECISIONS),
            "created": self.created,
            "user_id": self.user_id,
        }

    def risky(self) -> list[RiskyStep]:
        return [RiskyStep(**step) for step in self.steps]


def confirm_reply(pending: PendingConfirmation, language: str = "zh-CN") -> AppReply:
    """The task's answer while it waits: a `confirm` view saying what would run. It
    is a question (`notice` info: never shown as a success); what the tools that ask
    first state of themselves is its technical `detail`."""
    technical = [str(step.get("detail") or "") for step in pending.steps]
    return AppReply(
        status="ok",
        view_type="confirm",
        data=pending.public(),
        message=tr(
            language,
            f"需要你的确认：{pending.summary}",
            f"Please confirm: {pending.summary}",
        ),
        notice="info",
        detail="\n".join(t for t in technical if t) or None,
    )


def denied_results(
    plan: list[dict[str, Any]], risky: list[RiskyStep], language: str = "zh-CN"
) -> dict[str, Any]:
    """`tool_results` of a denied plan: nothing ran, every step an error `denied_by_user`."""
    asked = {step.step_id: step.sentence for step in risky}
    results: dict[str, Any] = {}
    for step in plan:
        step_id = int(step.get("step_id") or 0)
        reason = (
            user_message(DENIED_CODE, language, step=asked[step_id])
            if step_id in asked
            else user_message(f"{DENIED_CODE}.other_step", language)
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


# the answer to a question of a registered kind: (the question, the decision) → the reply
Decide = Callable[["PendingConfirmation", str], AppReply]


class ConfirmationGate:
    """The pending confirmations on disk, their events, and claiming one exactly once."""

    def __init__(self, folder: Path, events: EventBus):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._events = events
        self._lock = threading.Lock()
        self._handlers: dict[str, Decide] = {}

    def on_decision(self, kind: str, handler: Decide) -> None:
        """Answer the questions of `kind` with `handler(pending, decision)` (its reply)."""
        self._handlers[kind] = handler

    def handler_for(self, kind: str) -> Decide | None:
        """The handler of `kind`; None for a paused plan (the pipeline resumes those)."""
        return self._handlers.get(kind)

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
        language: str = "zh-CN",
        user_id: str = OWNER,
    ) -> AppReply:
        """Persist the question, announce it, and answer the task with a confirm view
        (its texts in `language`, as the policy's sentences are)."""
        sentences = tr(language, "；", "; ").join(step.sentence for step in risky)
        pending = PendingConfirmation(
            confirmation_id=f"{_ID_PREFIX}{secrets.token_hex(8)}",
            app_id=app_id,
            app_name=app_name,
            session_id=session_id,
            summary=tr(
                language,
                f"应用「{app_name}」将要{sentences}",
                f'The app "{app_name}" wants to {sentences}',
            ),
            steps=[step.to_json() for step in risky],
            plan=plan,
            round=round_no,
            kind="action" if action_request else ("instruction" if task_id else "open"),
            task_id=task_id,
            instruction=instruction,
            action_request=action_request,
            upstream=upstream,
            user_id=user_id,
        )
        self._store(pending)
        return confirm_reply(pending, language)

    def ask(
        self,
        *,
        kind: str,
        app_id: str,
        app_name: str,
        session_id: str,
        summary: str,
        plan: list[dict[str, Any]],
        risky: list[RiskyStep],
        job_id: str | None = None,
        user_id: str = OWNER,
    ) -> PendingConfirmation:
        """Persist and announce a question that is no paused plan (see `on_decision`)."""
        pending = PendingConfirmation(
            confirmation_id=f"{_ID_PREFIX}{secrets.token_hex(8)}",
            app_id=app_id,
            app_name=app_name,
            session_id=session_id,
            summary=summary,
            steps=[step.to_json() for step in risky],
            plan=plan,
            round=0,
            kind=kind,
            job_id=job_id,
            user_id=user_id,
        )
        self._store(pending)
        return pending

    def withdraw(self, kind: str, job_id: str) -> int:
        """Drop the pending questions of `kind` about `job_id` (answered another way,
        or their subject is gone); each is announced as resolved. How many."""
        dropped = 0
        for pending in self.pending():
            if pending.kind == kind and pending.job_id == job_id:
                try:
                    self.claim(pending.confirmation_id, "withdrawn")
                    dropped += 1
                except NotFound:
                    pass
        return dropped

    def _store(self, pending: PendingConfirmation) -> None:
        with self._lock:
            self._trim()
            atomic_write_text(
                self._path(pending.confirmation_id),
                json.dumps(asdict(pending), ensure_ascii=False, default=str),
                mode=0o600,
            )
        self._events.publish(
            "confirm_request",
            pending.public(),
            app_id=pending.app_id,
            session_id=pending.session_id,
        )

    def _trim(self) -> None:
        """Keep at most MAX_PENDING questions: the oldest go first."""
        files = sorted(
            self.folder.glob(f"{_ID_PREFIX}*.json"), key=lambda p: p.stat().st_mtime
        )
        for old in files[: max(0, len(files) - MAX_PENDING + 1)]:
            old.unlink(missing_ok=True)

    def _read(self, path: Path) -> PendingConfirmation | None:
        """The question in `path`; None when it is gone. A file that does not read as
        one (corrupt, truncated) is set aside and reported by name."""
        return read_state(path, _parse_confirmation, "a confirmation")

    def pending(self, user: str | None = None) -> list[PendingConfirmation]:
        """Every question still waiting (of `user` only, when given), oldest first."""
        found = [self._read(p) for p in self.folder.glob(f"{_ID_PREFIX}*.json")]
        mine = (p for p in found if p is not None and user in (None, p.user_id))
        return sorted(mine, key=lambda p: p.created)

    def get(self, confirmation_id: str) -> PendingConfirmation:
        pending = self._read(self._path(confirmation_id))
        if pending is None:
            raise NotFound(f"no pending confirmation {confirmation_id!r}")
        return pending

    def claim(self, confirmation_id: str, decision: str) -> PendingConfirmation:
        """Take the question off the list (once: a second claim is `NotFound`).

        `decision` is one of DECISIONS, or `withdrawn` (from `withdraw` only)."""
        if decision not in (*DECISIONS, "withdrawn"):
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


def _parse_confirmation(text: str) -> PendingConfirmation:
    raw = json.loads(text)
    if not isinstance(raw, dict):
        raise TypeError(f"a JSON {type(raw).__name__}, not an object")
    pending = PendingConfirmation(**raw)
    texts = (pending.confirmation_id, pending.app_id, pending.session_id, pending.user_id)
    if not (
        all(isinstance(t, str) and t for t in texts)
        and isinstance(pending.steps, list)
        and isinstance(pending.plan, list)
        and isinstance(pending.round, int)
    ):
        raise ValueError("a field of the wrong kind")
    return pending
