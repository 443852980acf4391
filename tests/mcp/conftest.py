"""Shared helpers of the MCP tests: the test servers' config entries."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import Any

SERVERS = Path(__file__).resolve().parent / "servers"


def server_entry(script: str, **extra: Any) -> dict[str, Any]:
    """A config.json `mcp_servers` entry running `servers/<script>.py`, tagged with a
    unique argument (find its processes with `tests.procs.processes_tagged`)."""
    tag = f"--aios-test-tag={secrets.token_hex(6)}"
    return {
        "command": sys.executable,
        "args": [str(SERVERS / f"{script}.py"), tag],
        **extra,
    }


def tag_of(entry: dict[str, Any]) -> str:
    return entry["args"][-1]
