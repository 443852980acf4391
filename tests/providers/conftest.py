"""Fixtures of the provider tests: the executor harness, a test provider, a slow loopback server."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from aios_protocol.errors import AiosError
from aios_runtime.serving import ServerHandle, start_server
from executor.providers.base import ToolCall, ToolEntry, ToolProvider
from tests.executor.conftest import harness, make_harness  # noqa: F401  (fixtures)

SLOW_S = 0.2


def entry(name: str, **over: Any) -> ToolEntry:
    fields: dict[str, Any] = {
        "name": name,
        "description": f"test tool {name}",
        "provider": "test",
        "input_schema": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "size": {"type": "integer"}},
            "additionalProperties": False,
        },
        "risk_level": "read",
        "requires_confirmation": False,
        "concurrency_safe": True,
        "max_result_size_chars": 1000,
    }
    return ToolEntry(**{**fields, **over})


class TestProvider(ToolProvider):
    """`echo` (safe), `big` (answers `size` characters), `boom` (raises), `slow_echo`
    (200 ms, safe), `ask` (needs the user's yes); after start `ask` may be withdrawn."""

    __test__ = False
    name = "test"

    def __init__(self, config: Any = None, *, fail_with: str | None = None) -> None:
        super().__init__(config)
        self.fail_with = fail_with
        self.calls: list[tuple[str, float, float]] = []

    @classmethod
    def declared_tools(cls, config: Any) -> list[ToolEntry]:
        return [
            entry("echo"),
            entry("big"),
            entry("boom", concurrency_safe=False),
            entry("slow_echo"),
            entry(
                "ask",
                risk_level="system",
                requires_confirmation=True,
                concurrency_safe=False,
            ),
        ]

    def tools(self) -> list[ToolEntry]:
        return [e for e in self.declared_tools(self.config) if e.name != "big"]

    def start(self) -> None:
        if self.fail_with:
            self._state, self._error = "failed", self.fail_with
        else:
            super().start()

    def prompt_text(self) -> str:
        return "Test tools."

    def call(self, call: ToolCall) -> Any:
        started = time.monotonic()
        if call.tool == "boom":
            raise AiosError("the test provider broke", code="provider_broke")
        if call.tool == "big":
            return "x" * int(call.args.get("size", 0))
        if call.tool == "slow_echo":
            time.sleep(SLOW_S)
        self.calls.append((call.tool, started, time.monotonic()))
        return {"text": call.args.get("text", ""), "app": call.app.app_id}


@pytest.fixture
def meeting_server() -> Iterator[ServerHandle]:
    """A loopback HTTP server whose `GET /meet` answers `{"met": true}` only when two
    requests are in it at the same time (`{"met": false}` after 10 s alone)."""
    app = Flask("meeting")
    meeting = threading.Barrier(2)

    @app.get("/meet")
    def meet() -> Any:
        try:
            meeting.wait(timeout=10)
        except threading.BrokenBarrierError:
            return {"met": False}
        return {"met": True}

    handle = start_server(app, 0, threads=8)
    yield handle
    handle.stop()
