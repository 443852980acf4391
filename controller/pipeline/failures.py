"""The error views of failed tasks, in the user's language (`context.language_of`).

A failure's `message` is the sentence of its error code in the strings table
(`aios_protocol.strings`), naming the app; the error's own (English, technical)
message goes to the view's `detail`, which the desktop shows folded away. What the
user reads never depends on the words of the exception.
"""

from __future__ import annotations

from collections.abc import Sequence

from aios_protocol.errors import AiosError
from aios_protocol.messages import AppReply
from aios_protocol.strings import user_message_of
from controller.routing.router import AppProfile

__all__ = ["app_name", "error_view", "failure_view"]


def error_view(code: str, message: str, detail: str | None = None) -> AppReply:
    """`AppReply.error(code, message)` with the technical `detail` (if any)."""
    reply = AppReply.error(code, message)
    return reply.model_copy(update={"detail": detail}) if detail else reply


def app_name(profiles: Sequence[AppProfile], app_id: str, language: str = "zh-CN") -> str:
    """The display name of `app_id` for a reader of `language` (its id when it is not
    among `profiles`)."""
    return next((p.name_in(language) for p in profiles if p.app_id == app_id), app_id)


def failure_view(exc: BaseException, app: str, language: str) -> AppReply:
    """The error view of a task that raised `exc` while the app named `app` served it.

    The technical text is the error's string `detail` when it has one, else its
    message; a cancelled task has none."""
    error = exc if isinstance(exc, AiosError) else AiosError(f"{type(exc).__name__}: {exc}")
    technical = error.detail if isinstance(error.detail, str) else error.message
    sentence = user_message_of(error, language, app=app)
    return error_view(
        error.code, sentence, None if error.code == "cancelled" else technical
    )
