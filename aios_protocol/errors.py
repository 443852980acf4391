"""The one error vocabulary of Triton AIOS.

Every failure that leaves a process is an `AiosError` with a stable string `code`
and an HTTP status; every service answers it as the one JSON error shape,
`{"status": "error", "error": {"code": ..., "message": ..., "detail"?: ...}}`, and an
app's failed reply is the error view `AppReply.error(code, message)`. Lower
libraries' errors are translated at the boundary (`raise ToolTimeout(...) from exc`).
Each class is named after its code (`tool_timeout` → `ToolTimeout`).

The tree (class: code, HTTP status; the module when it is not this one):

* AiosError: internal_error, 500
  + InvalidRequest: invalid_request, 400
    - InstallRefused: install_refused, 400 (controller.apps.installer)
      - AppExists: app_exists, 409 (controller.apps.installer)
  + UnsupportedMediaType: unsupported_media_type, 415
  + PayloadTooLarge: payload_too_large, 413
  + Forbidden: forbidden, 403
    - UserNotAllowed: user_not_allowed, 403
  + HostNotAllowed: host_not_allowed, 421
  + NotFound: not_found, 404
  + Overloaded: overloaded, 503
  + UserLimitReached: user_limit_reached, 429
  + AppUnreachable: app_unreachable, 502
    - PeerTimeout: app_unreachable, 502 (aios_runtime.json_client)
    - ExecutorUnreachable: executor_unreachable, 502 (controller.clients)
  + AppUnavailable: app_unavailable, 503
  + ControllerUnreachable: controller_unreachable, 502 (executor.tools.schedule)
  + StartupFailed: startup_failed, 500 (controller.apps.supervisor)
  + StorageFull: storage_full, 507 (aios_runtime.files)
  + JobRunning: job_running, 409 (scheduler.scheduler)
  + NeedsUserConfirmation: needs_user_confirmation, 403 (scheduler.scheduler)
  + Cancelled: cancelled, 409 (controller.pipeline.cancel)
  + BadAppReply: bad_app_reply, 502
  + UnknownTool: unknown_tool, 400
  + ToolUnavailable: tool_unavailable, 409 (executor.providers.registry)
  + InvalidArgs: invalid_args, 400 (executor.tools.catalog)
  + TemplateError: template_error, 400 (executor.templating)
  + ToolFailed: tool_failed, 500
    - NotAllowedBySkill: not_allowed_by_skill, 403 (executor.skills.scope)
  + ToolTimeout: tool_timeout, 504
  + PathOutsideWorkdir: path_outside_workdir, 403
  + CommandNotAllowed: command_not_allowed, 403
  + UrlNotAllowed: url_not_allowed, 403
  + NeedsConfirmation: needs_confirmation, 403
  + TooManyProcesses: too_many_processes, 429 (executor.sandbox.background)
  + LLMError: llm_error, 502 (aios_protocol.llm)
    - LLMTimeout: llm_timeout, 504 (aios_protocol.llm)
    - LLMUnauthorized: llm_unauthorized, 502 (aios_protocol.llm)
    - LLMRateLimited: llm_rate_limited, 503 (aios_protocol.llm)
    - LLMBadReply: llm_bad_reply, 502 (aios_protocol.llm)
    - LLMContextTooLong: llm_context_too_long, 502 (aios_protocol.llm)
    - LLMNotConfigured: llm_not_configured, 503 (aios_protocol.llm)
  + VoiceUnavailable: voice_unavailable, 503 (voice.engines)
  + VoiceNotUnderstood: voice_not_understood, 422 (voice.engines)
  + SpeechUnavailable: speech_unavailable, 503 (voice.output)

Codes without a class of their own, raised as `SomeClass(message, code=...)` or
answered as `AppReply.error(code, ...)`:

* tool results: file_not_found, not_a_file, not_a_directory, is_a_directory,
  file_too_large, http_error, response_too_large, too_many_redirects,
  connection_failed, sql_not_allowed, db_error, denied_by_user (a step the user
  refused; never run);
* the SDK's `call_tool`: not_connected, bad_executor_reply, missing_result (and
  executor_unreachable, as a `ToolFailed`);
* the HTTP edge and the controller: method_not_allowed, invalid_audio, app_error (an
  app's `handle` raised), dependency_failed, dependency_cycle, too_many_step_rounds;
* the OpenAI-compatible entry (`/v1`, in OpenAI's error shape): invalid_api_key;
* the router's answer when no app takes an instruction (a reply, not raised):
  no_app_matched, no_apps_installed, and apps_can (the line before what each
  installed app can do);
* the question before a risky step of a tool that asks first (a sentence, not
  raised): requires_confirmation, said per tool (`.install_skill`) or provider (`.mcp`);
* skills: skill_not_found, skill_broken, skill_not_executable, skill_install_failed,
  skill_run_failed (a skill ran and exited non-zero: the 技能 app's answer, not raised);
* the agent loop's tool results for its model: not_confirmed (a paused call the user
  did not answer), not_answered (a question of the loop the user moved on from
  without answering), max_turns, round_limit, no_fork (a sub-agent cannot fork),
  no_question (a sub-agent cannot ask the user), not_now (a question while calls
  wait for a confirmation), unknown_task (no such background sub-agent),
  executor_error, not_run.

`tests/core/test_error_tree.py` keeps this list complete.

An error's `message` is English, for developers and logs. What a person reads is
never that message: it is the sentence of the error's code in the user's language,
from the strings table of `aios_protocol.strings` (`user_message_of(error, language)`).
`variant` names a situation with words of its own (`app_unavailable.restarting`);
`placeholders` fill the sentence ({app}, {tool}, {path}, …).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "AiosError",
    "AppUnavailable",
    "AppUnreachable",
    "BadAppReply",
    "CommandNotAllowed",
    "Forbidden",
    "HostNotAllowed",
    "NeedsConfirmation",
    "NotFound",
    "Overloaded",
    "PathOutsideWorkdir",
    "PayloadTooLarge",
    "InvalidRequest",
    "ToolFailed",
    "UnknownTool",
    "ToolTimeout",
    "UnsupportedMediaType",
    "UrlNotAllowed",
    "UserLimitReached",
    "UserNotAllowed",
]


class AiosError(Exception):
    """Base of every error the system reports; `code` is stable and machine-readable.

    `message` is English, for developers; `variant` and `placeholders` choose and
    fill the user's sentence in the strings table (`sentence_key`)."""

    code: str = "internal_error"
    http_status: int = 500
    variant: str | None = None

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        detail: Any = None,
        variant: str | None = None,
        placeholders: Mapping[str, object] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if variant is not None:
            self.variant = variant
        self.detail = detail
        self.placeholders: dict[str, str] = {
            name: str(value) for name, value in (placeholders or {}).items()
        }

    @property
    def sentence_key(self) -> str:
        """The key of the user's sentence: the code, or `code.variant`."""
        return f"{self.code}.{self.variant}" if self.variant else self.code

    def to_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.detail is not None:
            body["detail"] = self.detail
        # what chooses and fills the reader's sentence travels with the error
        if self.variant is not None:
            body["variant"] = self.variant
        if self.placeholders:
            body["placeholders"] = dict(self.placeholders)
        return body

    @staticmethod
    def fields_of(body: Mapping[str, Any]) -> dict[str, Any]:
        """From an error body (`to_body()`), what rebuilds the error besides its code
        and message: `detail`, `variant` and `placeholders`."""
        variant = body.get("variant")
        placeholders = body.get("placeholders")
        return {
            "detail": body.get("detail"),
            "variant": variant if isinstance(variant, str) else None,
            "placeholders": placeholders if isinstance(placeholders, Mapping) else None,
        }

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


class InvalidRequest(AiosError):
    """A message does not have the protocol's shape (bad JSON, wrong field)."""

    code = "invalid_request"
    http_status = 400


class UnsupportedMediaType(AiosError):
    code = "unsupported_media_type"
    http_status = 415


class PayloadTooLarge(AiosError):
    code = "payload_too_large"
    http_status = 413


class Forbidden(AiosError):
    """Missing or wrong token, or a cross-site Origin."""

    code = "forbidden"
    http_status = 403


class UserNotAllowed(Forbidden):
    """The caller's key may not act for the user it named."""

    code = "user_not_allowed"


class UserLimitReached(AiosError):
    """A user is over one of their limits (disk quota, running instructions)."""

    code = "user_limit_reached"
    http_status = 429


class HostNotAllowed(AiosError):
    """A Host header that is not loopback (DNS-rebinding guard)."""

    code = "host_not_allowed"
    http_status = 421


class NotFound(AiosError):
    code = "not_found"
    http_status = 404


class Overloaded(AiosError):
    code = "overloaded"
    http_status = 503


class AppUnreachable(AiosError):
    code = "app_unreachable"
    http_status = 502


class AppUnavailable(AiosError):
    """An app that is restarting or has been given up on."""

    code = "app_unavailable"
    http_status = 503


class BadAppReply(AiosError):
    code = "bad_app_reply"
    http_status = 502


class UnknownTool(AiosError):
    code = "unknown_tool"
    http_status = 400


class ToolFailed(AiosError):
    """A tool ran and failed; raised in the SDK's `call_tool`."""

    code = "tool_failed"
    http_status = 500


class ToolTimeout(AiosError):
    code = "tool_timeout"
    http_status = 504


class PathOutsideWorkdir(AiosError):
    code = "path_outside_workdir"
    http_status = 403


class CommandNotAllowed(AiosError):
    code = "command_not_allowed"
    http_status = 403


class UrlNotAllowed(AiosError):
    code = "url_not_allowed"
    http_status = 403


class NeedsConfirmation(AiosError):
    """The call needs the user's yes, and it cannot be asked for on this path."""

    code = "needs_confirmation"
    http_status = 403
