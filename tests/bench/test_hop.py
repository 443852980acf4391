"""The benchmark's floor (`bench.hop`): an echo service on the services' own stack
(the edge, waitress) in its own process, reached with the hops' own client, and
nothing left running after it."""

from __future__ import annotations

import psutil
import pytest

from bench.hop import FLOOR_STACK, EchoServer, HopFailed, KeepAliveClient

pytestmark = pytest.mark.process


def test_the_floor_is_an_echo_service_in_its_own_process_on_the_hop_client() -> None:
    with EchoServer() as echo:
        assert echo.proc is not None
        pid = echo.proc.pid
        assert psutil.Process(pid).cmdline()[1] == "-c"  # a process of its own
        client = KeepAliveClient(echo.url, echo.token, timeout=5)
        stranger = KeepAliveClient(echo.url, "not-the-token", timeout=5)
        try:
            body = {"text": "bench probe", "n": [1, 2.5, None], "你": "好"}
            for _ in range(3):
                answer = client.post("/", body)
                assert answer == (200, body)
                assert list(answer[1]) == list(body)  # keys in their order, as services
            # the edge every service installs: the token and the error shape
            status, refused = stranger.post("/", body)
            assert status == 403 and refused["error"]["code"] == "forbidden"
            status, answer = client.get("/")
            assert status == 405 and answer["error"]["code"] == "method_not_allowed"
        finally:
            client.close()
            stranger.close()
        assert "Flask on waitress" in FLOOR_STACK
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"
    with pytest.raises(HopFailed):
        KeepAliveClient(echo.url, echo.token, timeout=2).post("/", {})
