"""http_request against a local HTTP server (127.0.0.1 allowed in the test config),
and the SSRF guard end to end (SECURITY.md R1, R3, R5, P4)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.executor.conftest import Harness

SONGS = {"songs": [{"id": "s_001", "name": "七里香", "url": "/song.mp3"}]}
MP3 = bytes(range(256)) * 40


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, content_type: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        self._route()

    def do_POST(self) -> None:  # noqa: N802
        self._route()

    def _route(self) -> None:
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path = parts.path
        if path == "/search":
            self._send(
                200,
                json.dumps(SONGS, ensure_ascii=False).encode(),
                "application/json; charset=utf-8",
            )
        elif path == "/echo":
            echo = {
                "method": self.command,
                "query": query,
                "body": body.decode(),
                "content_type": self.headers.get("Content-Type"),
                "x_custom": self.headers.get("X-Custom"),
                "authorization": self.headers.get("Authorization"),
            }
            self._send(200, json.dumps(echo).encode(), "application/json")
        elif path == "/text":
            self._send(200, "纯文本".encode(), "text/plain; charset=utf-8")
        elif path == "/song.mp3":
            self._send(200, MP3, "audio/mpeg")
        elif path == "/missing":
            self._send(404, b"no such song", "text/plain")
        elif path == "/redirect":
            self._send(
                int(query.get("code", "302")), b"", "text/plain", Location=query["to"]
            )
        elif path.startswith("/hop/"):
            left = int(path.rsplit("/", 1)[1])
            target = "/search" if left == 0 else f"/hop/{left - 1}"
            self._send(302, b"", "text/plain", Location=target)
        elif path == "/big":
            self._send(200, b"x" * int(query["n"]), "application/octet-stream")
        elif path == "/drip":
            self.send_response(200)
            self.send_header("Content-Type", "audio/mpeg")
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            try:
                for _ in range(1000):
                    self.wfile.write(b"d" * 10)
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                pass
        else:
            self._send(404, b"?", "text/plain")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_json_answer_is_parsed_like_the_design_sample(
    harness: Harness, server: str
) -> None:
    result = harness.call(
        "http_request", method="GET", url=f"{server}/search", params={"keyword": "周杰伦"}
    )
    assert result["status"] == "ok"
    assert result["result"] == SONGS


def test_params_headers_and_json_or_text_body(harness: Harness, server: str) -> None:
    echoed = harness.call(
        "http_request",
        method="POST",
        url=f"{server}/echo?a=1",
        params={"b": [2, 3], "c": True},
        headers={"X-Custom": "yes"},
        body={"k": "v"},
    )["result"]
    assert echoed["method"] == "POST" and echoed["x_custom"] == "yes"
    assert echoed["query"] == {"a": "1", "b": "2", "c": "true"}
    assert (
        json.loads(echoed["body"]) == {"k": "v"}
        and echoed["content_type"] == "application/json"
    )
    raw = harness.call("http_request", method="POST", url=f"{server}/echo", body="plain=1")[
        "result"
    ]
    assert raw["body"] == "plain=1"
    assert harness.call("http_request", url=f"{server}/text")["result"] == "纯文本"


def test_raw_mode_gives_status_headers_and_body(harness: Harness, server: str) -> None:
    raw = harness.call("http_request", url=f"{server}/missing", raw=True)
    assert raw["status"] == "ok"
    assert raw["result"]["status_code"] == 404 and raw["result"]["body"] == "no such song"
    assert raw["result"]["headers"]["Content-Type"] == "text/plain"


def test_non_2xx_is_http_error(harness: Harness, server: str) -> None:
    result = harness.call("http_request", url=f"{server}/missing")
    assert result["status"] == "error" and result["code"] == "http_error"
    assert "404" in result["error"] and result["result"]["body"] == "no such song"


def test_save_to_downloads_into_the_workdir(harness: Harness, server: str) -> None:
    """F-2's second step: `save_to` "workspace/qilixiang.mp3"."""
    result = harness.call(
        "http_request", url=f"{server}/song.mp3", save_to="workspace/qilixiang.mp3"
    )
    assert result["result"] == {
        "path": "workspace/qilixiang.mp3",
        "size": len(MP3),
        "content_type": "audio/mpeg",
    }
    assert (harness.workdir / "qilixiang.mp3").read_bytes() == MP3
    into_dir = harness.call("http_request", url=f"{server}/song.mp3", save_to="workspace")
    assert into_dir["result"]["path"] == "workspace/song.mp3"


def test_binary_body_without_save_to_is_base64(harness: Harness, server: str) -> None:
    result = harness.call("http_request", url=f"{server}/song.mp3")["result"]
    assert result["content_type"] == "audio/mpeg" and result["size"] == len(MP3)


def test_p4_save_to_outside_is_refused(harness: Harness, server: str) -> None:
    """P4: `save_to` of `../x` is refused, nothing written."""
    for dest in ("../x.mp3", "/tmp/x.mp3", "../app2/x.mp3"):
        result = harness.call("http_request", url=f"{server}/song.mp3", save_to=dest)
        assert result["code"] == "path_outside_workdir"
    assert not (harness.other_workdir / "x.mp3").exists()


def test_steps_feed_a_download_url_from_a_search(harness: Harness, server: str) -> None:
    """F-2 shape: search → download with `{{step_1.result…}}` → file_list."""
    results = harness.run(
        [
            {
                "step_id": 1,
                "tool": "http_request",
                "args": {
                    "method": "GET",
                    "url": f"{server}/search",
                    "params": {"keyword": "七里香 周杰伦"},
                },
            },
            {
                "step_id": 2,
                "tool": "http_request",
                "args": {
                    "method": "GET",
                    "url": f"{server}{{{{step_1.result.songs.0.url}}}}",
                    "save_to": "workspace/qilixiang.mp3",
                },
            },
            {"step_id": 3, "tool": "file_list", "args": {"path": "workspace"}},
        ]
    )
    assert results["step_2"]["status"] == "ok", results["step_2"]
    assert [f["name"] for f in results["step_3"]["result"]["files"]] == ["qilixiang.mp3"]


def test_r1_loopback_refused_without_the_allow_list(make_harness, server: str) -> None:
    """R1: without `http_allow_private_hosts`, 127.0.0.1 (our own server) is refused."""
    harness = make_harness({"tool_sandbox": {"http_allow_private_hosts": []}})
    port = server.rsplit(":", 1)[1]
    for url in (
        f"{server}/search",
        f"http://localhost:{port}/search",
        f"http://2130706433:{port}/",
        f"http://[::1]:{port}/",
        "http://169.254.169.254/latest/meta-data/",
    ):
        result = harness.call("http_request", url=url)
        assert result["status"] == "error" and result["code"] == "url_not_allowed", url


def test_r4_schemes_and_userinfo_refused(harness: Harness, server: str) -> None:
    for url in (
        "file:///etc/passwd",
        "gopher://127.0.0.1/",
        f"http://allowed.com@{server[7:]}/search",
    ):
        assert harness.call("http_request", url=url)["code"] == "url_not_allowed", url


def test_domain_whitelist_applies(make_harness, server: str) -> None:
    harness = make_harness({"tool_sandbox": {"http_domain_whitelist": ["example.com"]}})
    assert harness.call("http_request", url=f"{server}/search")["code"] == "url_not_allowed"


def test_r3_redirects_are_rechecked_and_bounded(harness: Harness, server: str) -> None:
    """R3: a redirect to a blocked address is refused; more than 5 hops is an error."""
    port = server.rsplit(":", 1)[1]
    ok = harness.call("http_request", url=f"{server}/hop/4")
    assert ok["result"] == SONGS
    too_many = harness.call("http_request", url=f"{server}/hop/5")
    assert too_many["code"] == "too_many_redirects"
    for target in (
        f"http://localhost:{port}/search",
        "http://10.0.0.1/",
        "file:///etc/passwd",
    ):
        bounced = harness.call(
            "http_request", url=f"{server}/redirect", params={"to": target}
        )
        assert bounced["code"] == "url_not_allowed", target


def test_redirect_303_turns_post_into_get(harness: Harness, server: str) -> None:
    result = harness.call(
        "http_request",
        method="POST",
        url=f"{server}/redirect",
        params={"code": "303", "to": "/echo"},
        body={"a": 1},
    )["result"]
    assert result["method"] == "GET" and result["body"] == ""


def test_r5_size_cap_and_slow_drip(make_harness, server: str) -> None:
    """R5: a huge response stops at the cap; a slow drip at the deadline; no partial file."""
    harness = make_harness({"limits": {"response_bytes": 1000, "download_bytes": 2000}})
    assert (
        harness.call("http_request", url=f"{server}/big", params={"n": 999})["status"]
        == "ok"
    )
    assert (
        harness.call("http_request", url=f"{server}/big", params={"n": 1001})["code"]
        == "response_too_large"
    )
    big_save = harness.call(
        "http_request", url=f"{server}/big", params={"n": 5000}, save_to="big.bin"
    )
    assert big_save["code"] == "response_too_large"
    drip = harness.call(
        "http_request", url=f"{server}/drip", save_to="drip.mp3", timeout=0.6
    )
    assert drip["code"] == "tool_timeout"
    assert sorted(p.name for p in harness.workdir.iterdir()) == []


def test_connection_refused_is_a_clear_error(harness: Harness) -> None:
    result = harness.call("http_request", url="http://127.0.0.1:9/")
    assert result["status"] == "error" and result["code"] == "connection_failed"


@pytest.mark.parametrize(
    ("body", "content_type", "expected"),
    [
        (b'{"resultCount": 1}', "text/javascript; charset=utf-8", {"resultCount": 1}),
        (b"  [1, 2]", "application/javascript", [1, 2]),
        (b"var x = 1;", "text/javascript", "var x = 1;"),
        (b'{"cut": ', "text/javascript", '{"cut": '),
        (b'{"a": 1}', "text/plain", '{"a": 1}'),
    ],
)
def test_json_labelled_as_script_is_parsed(
    body: bytes, content_type: str, expected: object
) -> None:
    """Apple's search API answers JSON as text/javascript: the result is the object."""
    from executor.tools.http_request import _decode

    assert _decode(body, content_type) == expected
