"""aios_sdk.http_server.LoopbackServer serving requests: keep-alive and
pipelining, request bodies (read ahead or streamed, 100-continue) and how answers
are framed (chunked, close-delimited, streamed, HEAD, app errors).

Raw bytes over `socket` where the point is the wire; `aios_sdk.loopback_http`,
`http.client` and `requests` as the real clients. No timing asserts: waits are on
Events or polls with generous timeouts.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from aios_sdk.http_request import MAX_DRAIN, PREREAD_IN_MEMORY, PREREAD_MAX
from aios_sdk.loopback_http import Connection

# before the import, so that the harness's asserts explain their failures too
pytest.register_assert_rewrite("tests.core.http_server_harness")

from tests.core.http_server_harness import (  # noqa: E402
    WAIT,
    Servers,
    Wire,
    assert_error_shape,
    request_bytes,
    serve_echo,
    wait_for,
)

pytest_plugins = ["tests.core.http_server_harness"]


# --------------------------------------------------------------- keep-alive


def test_several_requests_share_one_connection(echo: int) -> None:
    conn = Connection("127.0.0.1", echo, timeout=WAIT)
    try:
        first = conn.request("GET", "/one", None, {"Host": "127.0.0.1"})
        sock = conn._sock  # noqa: SLF001 - the socket identity is the point
        second = conn.request("POST", "/read", b"payload", {"Host": "127.0.0.1"})
        third = conn.request("GET", "/three", None, {"Host": "127.0.0.1"})
        assert conn._sock is sock  # noqa: SLF001
    finally:
        conn.close()
    assert json.loads(first.body) == {"path": "/one"}
    assert json.loads(second.body) == {"body": "payload"}
    assert json.loads(third.body) == {"path": "/three"}


def test_http_client_keeps_the_connection(echo: int) -> None:
    client = http.client.HTTPConnection("127.0.0.1", echo, timeout=WAIT)
    try:
        client.request("GET", "/a")
        first = client.getresponse()
        assert json.loads(first.read()) == {"path": "/a"}
        local = client.sock.getsockname()
        client.request("GET", "/unknown-length")
        second = client.getresponse()
        assert second.getheader("Transfer-Encoding") == "chunked"
        assert second.read() == b"first,second"
        assert client.sock.getsockname() == local
    finally:
        client.close()


def test_pipelined_requests_are_answered_in_order(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(
            request_bytes("GET", "/p1")
            + request_bytes("POST", "/read", body=b"second body")
            + b"\r\n"  # an empty line between requests is allowed
            + request_bytes("GET", "/sized")
            + request_bytes("GET", "/p4", [("Connection", "close")])
        )
        assert json.loads(wire.answer().body) == {"path": "/p1"}
        assert json.loads(wire.answer().body) == {"body": "second body"}
        assert wire.answer().body == b"sized"
        last = wire.answer()
        assert json.loads(last.body) == {"path": "/p4"}
        assert last.headers["connection"] == "close"
        assert wire.closed_by_server()


def test_connection_close_is_honoured(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(request_bytes("GET", "/bye", [("Connection", "close")]))
        answer = wire.answer()
        assert answer.status == 200
        assert answer.headers["connection"] == "close"
        assert wire.closed_by_server()


def test_http_1_0_closes_unless_asked_to_keep_alive(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(request_bytes("GET", "/old", version="HTTP/1.0"))
        answer = wire.answer()
        assert json.loads(answer.body) == {"path": "/old"}
        assert answer.headers["connection"] == "close"
        assert wire.closed_by_server()
    with Wire(echo) as wire:
        for n in range(2):
            wire.send(
                request_bytes(
                    "GET", f"/kept{n}", [("Connection", "keep-alive")], version="HTTP/1.0"
                )
            )
            answer = wire.answer()
            assert json.loads(answer.body) == {"path": f"/kept{n}"}
            assert answer.headers["connection"] == "keep-alive"


# -------------------------------------------------------------------- bodies


@pytest.fixture(scope="module", params=[PREREAD_MAX, 3], ids=["read-ahead", "streamed"])
def bodies(request: pytest.FixtureRequest) -> Iterator[int]:
    """An echo server reading bodies before the app runs; one reading them from the
    socket as the app asks (all but the smallest)."""
    yield from serve_echo(preread_max=request.param)


def test_a_content_length_body_reaches_the_app_exactly(bodies: int) -> None:
    data = "héllo\r\nwörld\x00 \xff".encode("latin-1")
    with Wire(bodies) as wire:
        wire.send(
            request_bytes("POST", "/read", body=data)
            + request_bytes("POST", "/read-pieces", body=b"abcdefgh")
        )
        assert json.loads(wire.answer().body)["body"].encode("latin-1") == data
        assert json.loads(wire.answer().body) == {"pieces": ["abc", "def", "gh"]}
        wire.send(
            request_bytes("POST", "/readline", body=b"line one\nline two\nthree\nlast")
        )
        assert json.loads(wire.answer().body) == {
            "lines": ["line one\n", "line", " two\n", "three\n", "last"]
        }


def test_a_body_split_across_packets_is_read_whole(bodies: int) -> None:
    with Wire(bodies) as wire:
        request = request_bytes("POST", "/read", body=b"0123456789" * 1000)
        head_end = request.index(b"\r\n\r\n") + 4
        wire.send(request[:head_end])
        wire.send(request[head_end : head_end + 10])
        wire.send(request[head_end + 10 :])
        assert json.loads(wire.answer().body)["body"] == "0123456789" * 1000


def test_an_unread_body_is_drained_for_the_next_request(bodies: int) -> None:
    with Wire(bodies) as wire:
        wire.send(
            request_bytes(
                "POST", "/ignore-body", body=b"GET /smuggled HTTP/1.1\r\n\r\n" * 100
            )
        )
        first = wire.answer()
        assert json.loads(first.body) == {"ignored": True}
        assert "connection" not in first.headers
        wire.send(request_bytes("GET", "/after"))
        assert json.loads(wire.answer().body) == {"path": "/after"}


def test_an_early_answer_to_a_large_upload_reaches_the_client(echo: int) -> None:
    # above PREREAD_MAX: read as the app asks, and too much to skip, so it closes
    upload = b"x" * (PREREAD_MAX + MAX_DRAIN)
    answer = requests.post(f"http://127.0.0.1:{echo}/too-large", data=upload, timeout=WAIT)
    assert answer.status_code == 413
    with Wire(echo) as wire:
        wire.send(request_bytes("POST", "/too-large", body=upload))
        early = wire.answer()
        assert early.status == 413
        assert early.headers.get("connection") == "close"
        assert wire.closed_by_server()


def test_a_refused_body_read_ahead_keeps_the_connection(echo: int) -> None:
    upload = b"x" * (MAX_DRAIN * 3)  # read whole before the app ran: nothing to skip
    with Wire(echo) as wire:
        wire.send(request_bytes("POST", "/too-large", body=upload))
        refused = wire.answer()
        assert refused.status == 413
        assert "connection" not in refused.headers
        wire.send(request_bytes("GET", "/next"))
        assert json.loads(wire.answer().body) == {"path": "/next"}


def test_readline_over_a_long_line(bodies: int) -> None:
    """A line longer than any buffer, read ahead (into a file) or from the socket."""
    long_line = b"0123456789" * (PREREAD_IN_MEMORY // 10 + 1) + b"\n"
    with Wire(bodies) as wire:
        wire.send(request_bytes("POST", "/readline", body=long_line + b"abcdefg\nlast"))
        lines = json.loads(wire.answer().body)["lines"]
    assert [len(line) for line in lines] == [len(long_line), 4, 4, 4]
    assert lines == [long_line.decode(), "abcd", "efg\n", "last"]


def expect_head(path: str, length: int, version: str = "HTTP/1.1") -> bytes:
    return (
        f"POST {path} {version}\r\nHost: 127.0.0.1\r\nContent-Length: {length}\r\n"
        "Expect: 100-continue\r\n\r\n"
    ).encode()


def test_expect_100_continue_is_answered_before_the_body(bodies: int) -> None:
    """Read ahead (the 100 comes before the app runs) or streamed (when it reads)."""
    with Wire(bodies) as wire:
        wire.send(expect_head("/read", 4))
        interim = wire.answer()
        assert interim.status == 100
        assert interim.headers == {}
        wire.send(b"body")
        assert json.loads(wire.answer().body) == {"body": "body"}
        wire.send(request_bytes("GET", "/next"))  # the connection still works
        assert json.loads(wire.answer().body) == {"path": "/next"}


def test_a_body_read_ahead_is_read_even_when_the_app_ignores_it(echo: int) -> None:
    with Wire(echo) as wire:
        smuggled = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
        wire.send(expect_head("/ignore-body", len(smuggled)))
        assert wire.answer().status == 100
        wire.send(smuggled)
        final = wire.answer()
        assert json.loads(final.body) == {"ignored": True}
        assert "connection" not in final.headers
        wire.send(request_bytes("GET", "/next"))
        assert json.loads(wire.answer().body) == {"path": "/next"}


def test_no_100_continue_when_the_body_already_came(echo: int) -> None:
    for version in ("HTTP/1.1", "HTTP/1.0"):
        with Wire(echo) as wire:
            wire.send(expect_head("/read", 4, version) + b"body")
            answer = wire.answer()
            assert (answer.status, json.loads(answer.body)) == (200, {"body": "body"})
    with Wire(echo) as wire:  # HTTP/1.0 knows no 100: the expectation is ignored
        wire.send(expect_head("/read", 4, "HTTP/1.0"))
        wire.sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            wire.answer()
        wire.sock.settimeout(WAIT)
        wire.send(b"body")
        assert json.loads(wire.answer().body) == {"body": "body"}


def test_no_100_continue_after_a_final_answer(echo: int) -> None:
    """A streamed body the app answered without reading: a late 100 would be taken
    for the next answer, and a body the client then withholds would swallow the
    next request."""
    with Wire(echo) as wire:
        wire.send(expect_head("/ignore-body", PREREAD_MAX + 1))
        final = wire.answer()
        assert final.status == 200
        assert final.headers["connection"] == "close"
        wire.send(b"body")  # the client may still send it; it is dropped
        assert wire.closed_by_server()


# ------------------------------------------------------------------- answers


def test_unknown_length_is_chunked_for_http_1_1(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(request_bytes("GET", "/unknown-length"))
        status, headers, _ = wire.head()
        assert status == 200
        assert headers["transfer-encoding"] == "chunked"
        assert "content-length" not in headers
        assert [wire.chunk(), wire.chunk(), wire.chunk()] == [b"first,", b"second", b""]
        wire.send(request_bytes("GET", "/still-open"))
        assert json.loads(wire.answer().body) == {"path": "/still-open"}


def test_unknown_length_is_close_delimited_for_http_1_0(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(
            request_bytes(
                "GET", "/unknown-length", [("Connection", "keep-alive")], version="HTTP/1.0"
            )
        )
        status, headers, _ = wire.head()
        assert status == 200
        assert "transfer-encoding" not in headers
        assert headers["connection"] == "close"
        assert wire.rest() == b"first,second"


def test_streamed_chunks_arrive_before_the_generator_ends(servers: Servers) -> None:
    go = threading.Event()
    ended = threading.Event()

    def events(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        def stream() -> Iterator[bytes]:
            start_response("200 OK", [("Content-Type", "text/event-stream")])
            yield b"data: one\n\n"
            assert go.wait(WAIT)
            yield b"data: two\n\n"
            ended.set()

        return stream()

    server = servers.start(events)
    with Wire(server.port) as wire:
        wire.send(request_bytes("GET", "/api/events"))
        status, headers, _ = wire.head()
        assert (status, headers["content-type"]) == (200, "text/event-stream")
        assert wire.chunk() == b"data: one\n\n"
        assert not ended.is_set()
        go.set()
        assert wire.chunk() == b"data: two\n\n"
        assert wire.chunk() == b""
        assert ended.is_set()


def test_requests_reads_a_stream_as_it_comes(servers: Servers) -> None:
    steps = [threading.Event() for _ in range(3)]

    def events(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        def stream() -> Iterator[bytes]:
            start_response("200 OK", [("Content-Type", "text/event-stream")])
            for n, step in enumerate(steps):
                yield f"data: {n}\n\n".encode()
                assert step.wait(WAIT)

        return stream()

    server = servers.start(events)
    url = f"http://127.0.0.1:{server.port}/api/events"
    with requests.get(url, stream=True, timeout=WAIT) as answer:
        lines = answer.iter_lines(chunk_size=1)
        for n, step in enumerate(steps):
            assert next(lines) == f"data: {n}".encode()
            assert next(lines) == b""
            step.set()


def test_head_keeps_the_length_and_sends_no_body(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(request_bytes("HEAD", "/sized") + request_bytes("GET", "/after-head"))
        head = wire.answer("HEAD")
        assert head.status == 200
        assert head.headers["content-length"] == "5"
        assert head.repeated == []
        assert json.loads(wire.answer().body) == {"path": "/after-head"}  # no stray body


def test_no_content_has_no_body(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(request_bytes("GET", "/no-content") + request_bytes("GET", "/after-204"))
        answer = wire.answer()
        assert answer.status == 204
        assert "transfer-encoding" not in answer.headers
        assert json.loads(wire.answer().body) == {"path": "/after-204"}


def test_content_length_of_the_app_is_sent_once(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(request_bytes("GET", "/sized"))
        answer = wire.answer()
        assert answer.headers["content-length"] == "5"
        assert answer.repeated == []
        assert answer.body == b"sized"


def test_an_app_sending_less_than_it_declared_ends_the_connection(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(request_bytes("GET", "/short-length"))
        status, headers, _ = wire.head()
        assert (status, headers["content-length"]) == (200, "10")
        assert wire.rest() == b"short"  # then the close: the client sees the cut


def test_an_app_sending_more_than_it_declared_is_cut_and_closed(echo: int) -> None:
    """The surplus must not reach the wire, where it would pass for the next answer."""
    with Wire(echo) as wire:
        wire.send(request_bytes("GET", "/long-length") + request_bytes("GET", "/next"))
        answer = wire.answer()
        assert (answer.status, answer.body) == (200, b"long")
        assert wire.rest() == b""


def test_an_app_raising_early_gets_a_json_500_and_a_close(echo: int) -> None:
    for path in ("/raise-before", "/raise-in-first"):
        with Wire(echo) as wire:
            wire.send(request_bytes("GET", path))
            answer = wire.answer()
            assert_error_shape(answer, 500)
            assert json.loads(answer.body)["error"]["code"] == "internal_error"
            assert wire.closed_by_server()


def test_an_app_raising_mid_stream_ends_the_connection(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(request_bytes("GET", "/raise-mid"))
        status, headers, _ = wire.head()
        assert (status, headers["transfer-encoding"]) == (200, "chunked")
        assert wire.chunk() == b"half of it"
        assert wire.rest() == b""  # no last chunk: the client knows it is cut
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        requests.get(f"http://127.0.0.1:{echo}/raise-mid", timeout=WAIT)


def test_hop_by_hop_headers_of_the_app_are_not_passed_on(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(request_bytes("GET", "/hop-by-hop"))
        answer = wire.answer()
        assert answer.body == b"hop"
        assert answer.headers["x-kept"] == "yes"
        for name in ("connection", "transfer-encoding", "keep-alive"):
            assert name not in answer.headers
        wire.send(request_bytes("GET", "/after-hop"))  # the server, not the app, decided
        assert json.loads(wire.answer().body) == {"path": "/after-hop"}


class _Tracked:
    """A WSGI result whose close() the server must call; it yields until told not to."""

    def __init__(self, forever: bool) -> None:
        self.forever = forever
        self.closed = threading.Event()

    def __iter__(self) -> Iterator[bytes]:
        yield b"x" * 1000
        while self.forever:
            yield b"x" * 65536

    def close(self) -> None:
        self.closed.set()


def test_the_result_is_closed_after_a_full_answer_and_a_disconnect(
    servers: Servers,
) -> None:
    results: list[_Tracked] = []

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        start_response("200 OK", [("Content-Type", "text/plain")])
        results.append(_Tracked(forever=environ["PATH_INFO"] == "/forever"))
        return results[-1]

    server = servers.start(app)
    with Wire(server.port) as wire:
        wire.send(request_bytes("GET", "/once"))
        assert wire.answer().body == b"x" * 1000
        assert results[0].closed.wait(WAIT)
    with Wire(server.port) as wire:
        wire.send(request_bytes("GET", "/forever"))
        wire.head()
        wire.chunk()
        wait_for(lambda: len(results) == 2, "the endless answer")
    # the client is gone: the server's next write fails and it must close the result
    assert results[1].closed.wait(WAIT)
    with Wire(server.port) as wire:  # and the server still serves
        wire.send(request_bytes("GET", "/once", [("Connection", "close")]))
        assert wire.answer().body == b"x" * 1000


def test_a_legacy_write_callable_is_sent_in_order(servers: Servers) -> None:
    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        write = start_response("200 OK", [("Content-Type", "text/plain")])
        write(b"written ")
        return [b"then returned"]

    server = servers.start(app)
    assert requests.get(f"http://127.0.0.1:{server.port}/", timeout=WAIT).content == (
        b"written then returned"
    )
