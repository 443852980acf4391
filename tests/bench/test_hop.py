"""The benchmark's floor (`bench.hop`): a Flask echo on waitress in its own process,
reached with the hops' own client, and nothing left running after it."""

from __future__ import annotations

import psutil
import pytest

from bench.hop import FLOOR_STACK, EchoServer, HopFailed, KeepAliveClient


def test_the_floor_is_a_flask_echo_in_its_own_process_reached_with_the_hop_client() -> None:
    with EchoServer() as echo:
        assert echo.proc is not None
        pid = echo.proc.pid
        assert psutil.Process(pid).cmdline()[1] == "-c"  # a process of its own
        client = KeepAliveClient(echo.url, timeout=5)
        try:
            body = {"text": "bench probe", "n": [1, 2.5, None], "你": "好"}
            for _ in range(3):
                assert client.post("/", body) == (200, body)
            status, answer = client.get("/")  # Flask's own 405 page: not JSON
            assert status == 405 and answer is None
        finally:
            client.close()
        assert "Flask on waitress" in FLOOR_STACK
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"
    with pytest.raises(HopFailed):
        KeepAliveClient(echo.url, timeout=2).post("/", {})
