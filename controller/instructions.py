"""What the parts beside the controller may ask of it: run one instruction, and say
which language a session's user reads.

Voice input and the scheduler send instructions as a typed word or a click would, and
no more: they never see the pipeline, the sessions or the admission queue behind it.
"""

from __future__ import annotations

from typing import Any, Protocol

from aios_protocol.messages import InstructionRequest, InstructionSource, Language
from controller.pipeline.admission import Admission
from controller.pipeline.context import ContextBuilder
from controller.pipeline.run import Pipeline
from controller.sessions import SessionStore

__all__ = ["InstructionEntry", "Instructions"]


class InstructionEntry(Protocol):
    """The controller as voice and the scheduler see it."""

    def instruct(
        self, text: str, session_id: str | None, source: InstructionSource
    ) -> dict[str, Any]:
        """Run `text` as the user's instruction; the `InstructionResponse` as JSON."""
        ...

    def language(self, session_id: str | None) -> Language:
        """The language the user of `session_id` reads (the settings' without one)."""
        ...


class Instructions:
    """`InstructionEntry` over the pipeline: each instruction waits its turn in the
    admission queue, as a typed one does."""

    def __init__(
        self,
        pipeline: Pipeline,
        admission: Admission,
        contexts: ContextBuilder,
        sessions: SessionStore,
    ) -> None:
        self._pipeline = pipeline
        self._admission = admission
        self._contexts = contexts
        self._sessions = sessions

    def instruct(
        self, text: str, session_id: str | None, source: InstructionSource
    ) -> dict[str, Any]:
        request = InstructionRequest(text=text, session_id=session_id, source=source)
        with self._admission.instruction():
            return self._pipeline.instruction(request).dump()

    def language(self, session_id: str | None) -> Language:
        session = self._sessions.get(session_id) if session_id else None
        return self._contexts.language(session)
