"""The error views of failed tasks, in the user's language (`context.language_of`).

A failure's `message` is a plain sentence naming the app, in Chinese or English; the
error's own (technical) text goes to the view's `detail`, which the desktop shows
folded away. An error this module has no sentence for keeps its own message when
that is written for the user (in Chinese: the supervisor's "「X」正在重启…"), else
gets "the app ran into a problem".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from aios_protocol.errors import AiosError
from aios_protocol.messages import AppReply
from aios_runtime.json_client import PeerTimeout
from controller.routing.router import AppProfile

__all__ = ["app_name", "error_view", "failure_view"]

# what the user is told, (Chinese, English), by the error's code ({app}: the app's
# name); executor_unreachable: the executor (not the app) did not answer, so the
# steps could not run; "timeout": the app answered too late; "other": any other code
_SAID = {
    "executor_unreachable": (
        "运行工具的服务（执行器）暂时无法连接，步骤没有完成，请稍后再试。",
        "The service that runs tools (the executor) could not be reached;"
        " the steps did not finish. Please try again shortly.",
    ),
    "timeout": ("「{app}」没有及时回答。", "“{app}” did not answer in time."),
    "app_unavailable": (
        "「{app}」现在不可用，请稍后再试。",
        "“{app}” is not available right now. Please try again in a moment.",
    ),
    "app_unreachable": ("无法连接「{app}」。", "“{app}” could not be reached."),
    "bad_app_reply": (
        "「{app}」的回复无法读取。",
        "“{app}” answered in a way the system cannot read.",
    ),
    "cancelled": ("已取消。", "Cancelled."),
    "overloaded": (
        "「{app}」正忙，请稍后再试。",
        "“{app}” is busy. Please try again shortly.",
    ),
    "internal_error": (
        "运行「{app}」时系统内部出错。",
        "Something went wrong inside the system while running “{app}”.",
    ),
    "other": ("「{app}」出了问题。", "“{app}” ran into a problem."),
}
# where a Chinese message of the error's own is kept (the supervisor's "正在重启…")
_OWN_WORDS = frozenset({"app_unavailable", "other"})
_CJK = re.compile(r"[\u4e00-\u9fff]")


def error_view(code: str, message: str, detail: str | None = None) -> AppReply:
    """`AppReply.error(code, message)` with the technical `detail` (if any)."""
    reply = AppReply.error(code, message)
    return reply.model_copy(update={"detail": detail}) if detail else reply


def app_name(profiles: Sequence[AppProfile], app_id: str) -> str:
    """The display name of `app_id` (its id when it is not among `profiles`)."""
    return next((p.name for p in profiles if p.app_id == app_id), app_id)


def failure_view(exc: BaseException, app: str, language: str) -> AppReply:
    """The error view of a task that raised `exc` while the app named `app` served it.

    The technical text is the error's string `detail` when it has one (the part of
    its message an English reader would not read), else its message."""
    if isinstance(exc, AiosError):
        code, text = exc.code, exc.message
        technical = exc.detail if isinstance(exc.detail, str) else exc.message
    else:
        code = "internal_error"
        text = technical = f"{type(exc).__name__}: {exc}"
    english = language == "en-US"
    key = code if code in _SAID else "other"
    if isinstance(exc, PeerTimeout):  # an app's late answer: its code is app_unreachable
        key = "timeout"
    if not english and key in _OWN_WORDS and _CJK.search(text):
        return error_view(code, text, technical if technical != text else None)
    zh, en = _SAID[key]
    sentence = en if english else zh
    return error_view(
        code, sentence.format(app=app), None if code == "cancelled" else technical
    )
