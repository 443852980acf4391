"""Before the loop may finish, and when a turn goes wrong.

Stop hooks run only on an answer without tool calls; each may find a problem with
the answer's claim and say so in one sentence, which goes back to the model for one
more round (at most `STOP_HOOK_ROUNDS` per request). The one shipped hook checks that
every workspace file the answer names exists. `Recovery` decides what a failed turn
leads to: a cut-off answer (`finish_reason: length`) is asked again once with a
larger `max_tokens`, then continued with a recovery message; a connection error or
timeout is asked again with the history unchanged; every path is bounded.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

from aios_sdk.errors import AiosError, ToolFailed

__all__ = [
    "RETRYABLE_CODES",
    "STOP_HOOK_ROUNDS",
    "Recovery",
    "StopHook",
    "files_named_exist",
    "named_files",
]

STOP_HOOK_ROUNDS = 1
RETRYABLE_CODES = frozenset({"llm_error", "llm_timeout", "llm_rate_limited"})
RECOVERY_MESSAGE = (
    "[runtime] Your previous answer was cut off by the output limit. Continue exactly "
    "where it stopped, and keep the rest short."
)

StopHook = Callable[[str], str | None]  # answer → the problem, or None

_WORKSPACE_PATH = re.compile(r"workspace/([\w\-./]+\.[A-Za-z0-9]{1,8})\b")
_QUOTED_FILE = re.compile(r"`([\w\-./]+\.[A-Za-z0-9]{1,8})`")


def named_files(answer: str) -> list[str]:
    """Workspace files an answer claims: `workspace/…` paths and `name.ext` in
    backticks (no URLs, no absolute paths)."""
    found: list[str] = []
    for pattern in (_WORKSPACE_PATH, _QUOTED_FILE):
        for match in pattern.finditer(answer):
            path = match.group(1).strip("./")
            if (
                path
                and not path.startswith("/")
                and "://" not in path
                and path not in found
            ):
                found.append(path)
    return found[:10]


def files_named_exist(list_dir: Callable[[str], list[str]]) -> StopHook:
    """The hook: every file the answer names is in the workspace. `list_dir(path)`
    answers the names in that folder (`file_list`), raising `ToolFailed` when the
    folder is missing."""

    def check(answer: str) -> str | None:
        missing = []
        for path in named_files(answer):
            folder, name = posixpath.split(path)
            try:
                names = list_dir(folder or ".")
            except (ToolFailed, AiosError):
                names = []
            if name not in names:
                missing.append(path)
        if not missing:
            return None
        return (
            "[stop hook] Your answer names "
            + ", ".join(f"workspace/{p}" for p in missing)
            + " but no such file exists in the workspace. Create it with a tool, or "
            "correct the answer."
        )

    return check


@dataclass
class Recovery:
    """The bounded recoveries of one request."""

    max_tokens: int
    max_recoveries: int = 3
    used: int = 0
    escalated: bool = False

    def can_recover(self) -> bool:
        return self.used < self.max_recoveries

    def cut_off(self) -> tuple[str, int]:
        """What to do with a cut-off answer: ("escalate", tokens) the first time (ask
        again, nothing kept), then ("continue", tokens) (keep it, ask to go on)."""
        self.used += 1
        if not self.escalated:
            self.escalated = True
            return "escalate", min(self.max_tokens * 4, 16384)
        return "continue", min(self.max_tokens * 4, 16384)

    def connection(self, code: str) -> bool:
        """Whether a model error with `code` is asked again (history unchanged)."""
        if code not in RETRYABLE_CODES or not self.can_recover():
            return False
        self.used += 1
        return True
