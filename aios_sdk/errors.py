"""The one error vocabulary of Triton AIOS.

Every failure that leaves a process is an `AiosError` with a stable string `code`
and an HTTP status; every service turns it into the one JSON error shape
(`protocol.ErrorResponse`). Lower libraries' errors are translated at the boundary
(`raise ToolTimeout(...) from exc`).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AiosError",
    "AppUnavailable",
    "AppUnreachable",
    "BadAppReply",
    "CommandNotAllowed",
    "Forbidden",
    "HostNotAllowed",
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
]


class AiosError(Exception):
    """Base of every error the system reports; `code` is stable and machine-readable."""

    code: str = "internal_error"
    http_status: int = 500

    def __init__(self, message: str, *, code: str | None = None, detail: Any = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.detail = detail

    def to_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.detail is not None:
            body["detail"] = self.detail
        return body

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
