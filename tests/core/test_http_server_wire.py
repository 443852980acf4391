"""aios_sdk.http_server.LoopbackServer reading requests off the wire: the refusals
of hostile or unsupported bytes (each a JSON error and a closed connection) and
how a request head becomes the WSGI environ. Raw bytes over `socket` (see
`tests.core.http_server_harness`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

# before the import, so that the harness's asserts explain their failures too
pytest.register_assert_rewrite("tests.core.http_server_harness")

from tests.core.http_server_harness import (  # noqa: E402
    Servers,
    Wire,
    assert_error_shape,
    json_answer,
    request_bytes,
)

pytest_plugins = ["tests.core.http_server_harness"]


# ------------------------------------------------------------------ refusals

LONG_TARGET = "/" + "a" * (9 << 10)
REFUSED = {
    "chunked": (
        b"POST /read HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"4\r\nbody\r\n0\r\n\r\n",
        501,
    ),
    "te-and-cl": (
        b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
        b"Transfer-Encoding: chunked\r\n\r\nbody",
        501,
    ),
    "two-lengths": (
        b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nbody!",
        400,
    ),
    "length-list": (
        b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 4, 4\r\n\r\nbody",
        400,
    ),
    "length-word": (b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: four\r\n\r\n", 400),
    "length-negative": (
        b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
        400,
    ),
    "length-plus": (
        b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: +4\r\n\r\nbody",
        400,
    ),
    "line-two-parts": (b"GET /\r\nHost: x\r\n\r\n", 400),
    "line-double-space": (b"GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "line-bad-method": (b"G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "line-bad-version": (b"GET / HTCPCP/1.0\r\nHost: x\r\n\r\n", 400),
    "line-control-in-target": (b"GET /a\x01b HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "http2": (b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
    "request-line-too-long": (
        f"GET {LONG_TARGET} HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
        414,
    ),
    "head-too-large": (
        b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Big: " + b"b" * (70 << 10) + b"\r\n\r\n",
        431,
    ),
    "too-many-headers": (
        b"GET / HTTP/1.1\r\n" + b"".join(b"X-H%d: v\r\n" % n for n in range(101)) + b"\r\n",
        431,
    ),
    "space-before-colon": (b"GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400),
    "space-in-name": (b"GET / HTTP/1.1\r\nHost: x\r\nX Token: y\r\n\r\n", 400),
    "no-colon": (b"GET / HTTP/1.1\r\nHost: x\r\nJustAName\r\n\r\n", 400),
    "folded": (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: one\r\n two\r\n\r\n", 400),
    "folded-tab": (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: one\r\n\ttwo\r\n\r\n", 400),
    "control-in-value": (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: o\x01ne\r\n\r\n", 400),
    "nul-in-value": (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: o\x00ne\r\n\r\n", 400),
    "bare-lf-in-value": (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: one\nX-B: two\r\n\r\n", 400),
    "bare-cr-in-value": (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: one\rX-B: two\r\n\r\n", 400),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_requests_get_a_json_error_and_a_closed_connection(
    echo: int, case: str
) -> None:
    data, status = REFUSED[case]
    with Wire(echo) as wire:
        wire.send(data)
        answer = wire.answer()
        assert_error_shape(answer, status)
        assert wire.closed_by_server()


@pytest.mark.parametrize("case", ["request-line-too-long", "head-too-large"])
def test_size_limits_hold_however_the_head_is_cut(echo: int, case: str) -> None:
    """Sent in small pieces, the limit is met while the head is still incomplete."""
    data, status = REFUSED[case]
    with Wire(echo) as wire:
        try:
            for start in range(0, len(data), 1000):
                wire.send(data[start : start + 1000])
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server refused before the end; its answer is still readable
        assert_error_shape(wire.answer(), status)
        assert wire.closed_by_server()


def test_limits_are_not_too_strict(echo: int) -> None:
    target = "/" + "a" * ((8 << 10) - 40)
    headers = [(f"X-H{n}", "v" * 500) for n in range(98)]
    with Wire(echo) as wire:
        wire.send(request_bytes("GET", target, headers))
        answer = wire.answer()
        assert answer.status == 200
        assert json.loads(answer.body) == {"path": target}


def test_a_refused_request_reaches_no_app_and_smuggles_nothing(servers: Servers) -> None:
    seen: list[str] = []

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        seen.append(environ["PATH_INFO"])
        return json_answer(start_response, "200 OK", {})

    server = servers.start(app)
    with Wire(server.port) as wire:
        wire.send(
            b"POST /first HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            b"Content-Length: 30\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n"
        )
        assert wire.answer().status == 501
        assert wire.closed_by_server()
    assert seen == []


# ------------------------------------------------------------ header mapping


def test_underscore_headers_never_pose_as_dashed_ones(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(request_bytes("GET", "/environ", [("X_AIOS_Token", "forged")]))
        environ = json.loads(wire.answer().body)
        assert "HTTP_X_AIOS_TOKEN" not in environ
        assert "forged" not in json.dumps(environ)
        wire.send(
            request_bytes(
                "GET", "/environ", [("X_AIOS_Token", "forged"), ("X-AIOS-Token", "real")]
            )
        )
        assert json.loads(wire.answer().body)["HTTP_X_AIOS_TOKEN"] == "real"
        wire.send(
            request_bytes(
                "GET", "/environ", [("X-AIOS-Token", "real"), ("X_AIOS_Token", "forged")]
            )
        )
        assert json.loads(wire.answer().body)["HTTP_X_AIOS_TOKEN"] == "real"


def test_header_mapping_into_environ(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(
            request_bytes(
                "POST",
                "/environ",
                [
                    ("Accept", "text/html"),
                    ("accept", "application/json"),
                    ("Content-Type", "application/json"),
                    ("X-Spaced", "  padded value\t"),
                    ("X-Latin", "caf\xe9"),
                ],
                body=b"{}",
            )
        )
        environ = json.loads(wire.answer().body)
    assert environ["HTTP_ACCEPT"] == "text/html,application/json"
    assert environ["CONTENT_TYPE"] == "application/json"
    assert environ["CONTENT_LENGTH"] == "2"
    assert "HTTP_CONTENT_TYPE" not in environ
    assert "HTTP_CONTENT_LENGTH" not in environ
    assert environ["HTTP_X_SPACED"] == "padded value"
    assert environ["HTTP_X_LATIN"] == "caf\xe9"
    assert environ["HTTP_HOST"] == "127.0.0.1"
    assert environ["SERVER_PROTOCOL"] == "HTTP/1.1"


def test_content_length_key_only_when_a_length_came(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(request_bytes("GET", "/environ"))
        assert "CONTENT_LENGTH" not in json.loads(wire.answer().body)
        wire.send(request_bytes("POST", "/environ", [("Content-Length", "0")]))
        assert json.loads(wire.answer().body)["CONTENT_LENGTH"] == "0"


def test_path_is_percent_decoded_and_query_kept_raw(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(
            request_bytes("GET", "/environ/a%20b/%E4%BD%A0/%2F?q=a%20b&x=%E4%BD%A0+c&e=")
        )
        environ = json.loads(wire.answer().body)
    assert environ["PATH_INFO"] == "/environ/a b/\xe4\xbd\xa0//"  # latin-1, as WSGI wants
    assert environ["PATH_INFO"].encode("latin-1").decode("utf-8") == "/environ/a b/你//"
    assert environ["QUERY_STRING"] == "q=a%20b&x=%E4%BD%A0+c&e="


def test_absolute_form_target(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(request_bytes("GET", "http://127.0.0.1:1/environ?x=1"))
        environ = json.loads(wire.answer().body)
        assert environ["PATH_INFO"] == "/environ"
        assert environ["QUERY_STRING"] == "x=1"
        wire.send(request_bytes("GET", "http://127.0.0.1:1"))
        assert json.loads(wire.answer().body) == {"path": "/"}
