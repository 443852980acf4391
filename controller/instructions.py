"""What the parts beside the controller may ask of it: run one instruction, answer a
paused step (one of the asking user's own: `questions`, `answer`), keep a note in a
session, list the apps, and say which language a session's user reads.

Voice input, the scheduler and the OpenAI-compatible entry send instructions as a
typed word or a click would, and no more: they never see the pipeline, the sessions or
the admission queue behind it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from aios_protocol.errors import NotFound
from aios_protocol.messages import (
    AppInfo,
    AppReply,
    InstructionRequest,
    InstructionResponse,
    InstructionSource,
    Language,
)
from controller.permissions.confirmations import ConfirmationGate
from controller.pipeline.admission import Admission
from controller.pipeline.context import ContextBuilder
from controller.pipeline.run import Pipeline
from controller.sessions import SessionStore

__all__ = ["InstructionEntry", "Instructions", "Resumed"]


class InstructionEntry(Protocol):
    """The controller as voice and the scheduler see it."""

    def instruct(
        self,
        text: str,
        session_id: str | None,
        source: InstructionSource,
        language: Language | None = None,
    ) -> dict[str, Any]:
        """Run `text` as the user's instruction (read by a user of `language`, when
        given); the `InstructionResponse` as JSON."""
        ...

    def language(self, session_id: str | None) -> Language:
        """The language the user of `session_id` reads (the settings' without one)."""
        ...


@dataclass(frozen=True)
class Resumed:
    """A paused step answered: the app's reply, and whose it is."""

    reply: AppReply
    app_id: str
    task_id: str | None


class Instructions:
    """`InstructionEntry` over the pipeline: each instruction waits its turn in the
    admission queue, as a typed one does."""

    def __init__(
        self,
        pipeline: Pipeline,
        admission: Admission,
        contexts: ContextBuilder,
        sessions: SessionStore,
        app_infos: Callable[[], Sequence[AppInfo]],
        confirmations: ConfirmationGate | None,
    ) -> None:
        self._pipeline = pipeline
        self._admission = admission
        self._contexts = contexts
        self._sessions = sessions
        self._app_infos = app_infos
        self._confirmations = confirmations

    def run(self, request: InstructionRequest) -> InstructionResponse:
        """Run one instruction once the admission queue lets it in."""
        with self._admission.instruction():
            return self._pipeline.instruction(request)

    def instruct(
        self,
        text: str,
        session_id: str | None,
        source: InstructionSource,
        language: Language | None = None,
    ) -> dict[str, Any]:
        request = InstructionRequest(
            text=text, session_id=session_id, source=source, language=language
        )
        return self.run(request).dump()

    def resume_waiting(self, session_id: str, decision: str) -> Resumed | None:
        """Answer the newest step of `session_id` waiting for the user's yes with
        `decision`; None when none waits."""
        if self._confirmations is None:
            return None
        mine = [p for p in self._confirmations.pending() if p.session_id == session_id]
        if not mine:
            return None
        waiting = mine[-1]
        with self._admission.app(waiting.app_id):
            reply, app_id, _ = self._pipeline.resume(waiting.confirmation_id, decision)
        return Resumed(reply, app_id, waiting.task_id)

    def questions(self, user: str) -> list[dict[str, Any]]:
        """What waits for `user`'s yes (their own questions only)."""
        if self._confirmations is None:
            return []
        return [p.public() for p in self._confirmations.pending(user=user)]

    def answer(self, confirmation_id: str, decision: str, user: str) -> Resumed:
        """Answer one of `user`'s own questions (another's is `NotFound`)."""
        asked = self._confirmations.get(confirmation_id) if self._confirmations else None
        if asked is None or asked.user_id != user:
            raise NotFound(f"no pending confirmation {confirmation_id!r}")
        with self._admission.app(asked.app_id):
            reply, app_id, _ = self._pipeline.resume(confirmation_id, decision)
        return Resumed(reply, app_id, asked.task_id)

    def keep_note(self, session_id: str, key: str, value: str | None) -> None:
        """Set (or, with None, drop) one entry of the session's context."""
        with self._sessions.lock(session_id):
            session = self._sessions.get_or_create(session_id)
            if session.context.get(key) == (value or None):
                return
            if value:
                session.context[key] = value
            else:
                session.context.pop(key, None)
            self._sessions.save(session)

    def note(self, session_id: str, key: str) -> str | None:
        """One entry of the session's context (`keep_note`), or None."""
        session = self._sessions.get(session_id)
        value = session.context.get(key) if session is not None else None
        return str(value) if value else None

    def app_ids(self) -> list[str]:
        """Every installed app, running or not."""
        return [info.id for info in self._app_infos()]

    def language(self, session_id: str | None) -> Language:
        session = self._sessions.get(session_id) if session_id else None
        return self._contexts.language(session)
