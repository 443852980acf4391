"""The `Edge` Flask extension (aios_runtime.edge): installing it, what it decides
before a view runs, Flask's own JSON made strict, the one error shape with CORS and
nosniff on every answer; then the same rules over real sockets on waitress, and the
app site's guard that gives every bare `flask.Flask` of an app process the edge."""

from __future__ import annotations

import hmac
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask, g, jsonify, request

from aios_runtime import edge as edge_module
from aios_runtime.edge import (
    EXTENSION,
    Edge,
    create_service,
    public,
    token_matches,
)
from aios_runtime.serving import ServerHandle, start_server
from tests.security.wire import raw_request

TOKEN = "edge-token-0123456789abcdef"
AUTH = {"X-AIOS-Token": TOKEN}
ROOT = Path(__file__).resolve().parents[2]
APP_SITE = ROOT / "controller" / "apps" / "app_site"


def bare_app(ran: list[str]) -> Flask:
    app = Flask("bare")

    @app.before_request
    def own_hook() -> None:
        ran.append("own hook")

    @app.get("/health")
    def health() -> dict:
        return {"status": "ok"}

    @app.post("/echo")
    def echo() -> dict:
        got = request.get_json()
        ran.append("echo")
        return {"got": got, "identity": g.identity}

    @app.get("/boom")
    def boom() -> dict:
        raise RuntimeError("broken view")

    return app


@pytest.fixture
def ran() -> list[str]:
    return []


@pytest.fixture
def app(ran: list[str]) -> Flask:
    app = bare_app(ran)
    Edge(app, token_matches(TOKEN), max_body=1 << 16, public_paths=("/health",))
    return app


# ----------------------------------------------------------------- install


def test_the_edge_decides_before_the_apps_own_hooks(app: Flask, ran: list[str]) -> None:
    client = app.test_client()
    assert client.post("/echo", json={"a": 1}).status_code == 403
    assert client.get("/health", headers={"Host": "evil.example"}).status_code == 421
    assert ran == []  # neither the app's before_request nor the view ran
    answer = client.post("/echo", json={"a": 1}, headers=AUTH)
    assert answer.json == {"got": {"a": 1}, "identity": "controller"}
    assert ran == ["own hook", "echo"]


def test_installing_again_replaces_the_settings_not_the_hooks(app: Flask) -> None:
    hooks = len(app.before_request_funcs[None])
    Edge(app, token_matches("another-token"))
    assert len(app.before_request_funcs[None]) == hooks
    assert app.extensions[EXTENSION].public_paths == frozenset()
    client = app.test_client()
    assert client.post("/echo", json={}, headers=AUTH).status_code == 403
    assert client.post("/echo", json={}, headers={"X-AIOS-Token": "another-token"}).json
    assert client.get("/health").status_code == 403  # no longer public


def test_init_app_and_public_views() -> None:
    app = Flask("later")
    edge = Edge(authenticate=token_matches(TOKEN))

    @app.get("/open")
    @public
    def open_route() -> dict:
        return {"open": True, "identity": g.identity}

    @app.get("/closed")
    def closed_route() -> dict:
        return {"closed": True}

    edge.init_app(app)
    client = app.test_client()
    assert client.get("/open").json == {"open": True, "identity": None}
    assert client.get("/closed").status_code == 403
    assert client.get("/closed", headers=AUTH).json == {"closed": True}


def test_an_edge_without_an_authenticator_refuses_every_token() -> None:
    app = Flask("nobody")
    Edge(app)
    app.add_url_rule("/x", "x", lambda: {"x": 1})
    assert app.test_client().get("/x", headers=AUTH).status_code == 403


def test_token_in_query_only_where_asked_and_only_on_get() -> None:
    app = create_service("query", token_matches(TOKEN), token_in_query=True)
    app.add_url_rule("/stream", "stream", lambda: {"ok": True}, methods=["GET", "POST"])
    client = app.test_client()
    assert client.get(f"/stream?token={TOKEN}").status_code == 200
    assert client.post(f"/stream?token={TOKEN}").status_code == 403
    plain = create_service("plain", token_matches(TOKEN))
    plain.add_url_rule("/stream", "stream", lambda: {"ok": True})
    assert plain.test_client().get(f"/stream?token={TOKEN}").status_code == 403


def test_tokens_are_compared_with_hmac_compare_digest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert edge_module.compare_digest is hmac.compare_digest
    compared: list[tuple[bytes, bytes]] = []

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return hmac.compare_digest(a, b)

    monkeypatch.setattr(edge_module, "compare_digest", spy)
    check = token_matches("right")
    assert check("wrong") is None and check("right") == "controller"
    assert len(compared) == 2
    assert token_matches("")("") is None  # an empty expected token accepts nothing


# ------------------------------------------------------------ JSON and errors


@pytest.mark.parametrize(
    ("body", "ctype", "status", "code"),
    [
        (b'{"a": NaN}', "application/json", 400, "invalid_request"),
        (b'{"a": Infinity}', "application/json", 400, "invalid_request"),
        (b'{"a": "\xff"}', "application/json", 400, "invalid_request"),
        (b"[" * 60_000, "application/json", 400, "invalid_request"),
        (b'{"a": ', "application/json", 400, "invalid_request"),
        (b'{"a": 1}', "text/plain", 415, "unsupported_media_type"),
        (
            b'{"a": "' + b"x" * (1 << 17) + b'"}',
            "application/json",
            413,
            "payload_too_large",
        ),
    ],
    ids=["nan", "infinity", "bad-utf8", "nested", "cut-off", "text-plain", "too-large"],
)
def test_flasks_own_get_json_is_strict(
    app: Flask, ran: list[str], body: bytes, ctype: str, status: int, code: str
) -> None:
    answer = app.test_client().post(
        "/echo", data=body, headers={**AUTH, "Content-Type": ctype}
    )
    assert answer.status_code == status
    assert answer.json == {"status": "error", "error": answer.json["error"]}
    assert answer.json["error"]["code"] == code
    assert "echo" not in ran


def test_every_error_has_the_one_shape_with_edge_headers(app: Flask) -> None:
    client = app.test_client()
    origin = {"Origin": "http://localhost:8000"}
    cases = [
        (client.get("/nowhere", headers={**AUTH, **origin}), 404, "not_found"),
        (client.get("/echo", headers={**AUTH, **origin}), 405, "method_not_allowed"),
        (client.get("/boom", headers={**AUTH, **origin}), 500, "internal_error"),
        (client.post("/echo", headers=origin), 403, "forbidden"),
    ]
    for answer, status, code in cases:
        assert answer.status_code == status
        assert answer.json["status"] == "error"
        assert set(answer.json["error"]) == {"code", "message"}
        assert answer.json["error"]["code"] == code
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
        assert answer.headers["Access-Control-Allow-Origin"] == "http://localhost:8000"
    assert "broken view" in cases[2][0].json["error"]["message"]


def test_preflight_and_cors_for_loopback_origins_only(app: Flask) -> None:
    client = app.test_client()
    preflight = client.options("/echo", headers={"Origin": "http://127.0.0.1:9"})
    assert preflight.status_code == 204
    assert preflight.headers["Access-Control-Allow-Origin"] == "http://127.0.0.1:9"
    assert "X-AIOS-Token" in preflight.headers["Access-Control-Allow-Headers"]
    assert (
        client.options("/echo", headers={"Origin": "https://evil.example"}).status_code
        == 403
    )
    plain = client.get("/health")
    assert "Access-Control-Allow-Origin" not in plain.headers
    assert plain.headers["X-Content-Type-Options"] == "nosniff"


def test_answers_are_utf8_with_keys_in_order(app: Flask) -> None:
    @app.get("/ordered")
    def ordered():
        return jsonify({"z": "七里香", "a": 1})

    raw = app.test_client().get("/ordered", headers=AUTH).data
    assert raw.decode("utf-8").index('"z"') < raw.decode("utf-8").index('"a"')
    assert "七里香" in raw.decode("utf-8")


# --------------------------------------------------------- on waitress, raw


@pytest.fixture
def served(app: Flask) -> Iterator[ServerHandle]:
    handle = start_server(app, 0, threads=2, max_request_body_size=1 << 20)
    yield handle
    handle.stop()


def _post(port: int, headers: list[tuple[str, str]], body: bytes = b'{"a": 1}'):
    return raw_request(port, "POST", "/echo", headers, body)


def test_on_waitress_the_edge_holds_for_raw_requests(
    served: ServerHandle, ran: list[str]
) -> None:
    port = served.port
    json_type = ("Content-Type", "application/json")
    token = ("X-AIOS-Token", TOKEN)
    assert _post(port, [json_type, token]).status == 421  # no Host at all
    assert _post(port, [("Host", ""), json_type, token]).status == 421
    forged = _post(port, [("Host", "127.0.0.1"), json_type, ("X_AIOS_Token", TOKEN)])
    assert forged.status == 403  # an underscore name does not pose as the token header
    big = b'{"a": "' + b"x" * (200 << 10) + b'"}'  # over the edge's 64 KiB
    too_large = _post(port, [("Host", "127.0.0.1"), json_type, token], big)
    assert too_large.status == 413
    assert json.loads(too_large.body)["error"]["code"] == "payload_too_large"
    assert ran == []  # not even the app's own before_request hook
    ok = _post(port, [("Host", f"localhost:{port}"), json_type, token])
    assert ok.status == 200 and json.loads(ok.body)["got"] == {"a": 1}
    beyond = raw_request(
        port,
        "POST",
        "/echo",
        [("Host", "127.0.0.1"), json_type, token],
        content_length=8 << 20,
    )
    assert beyond.status == 413  # waitress refuses above its ceiling, unread


# ------------------------------------------------------ the app site's guard

PROBE = """
import json, flask
from aios_runtime.edge import EXTENSION, create_service, token_matches
bare = flask.Flask("bare")
bare.add_url_rule("/x", "x", lambda: {"x": 1})
client = bare.test_client()
own = create_service("sdk", token_matches("the-sdks-own"))
own.add_url_rule("/x", "x", lambda: {"x": 1})
print(json.dumps({
    "public": sorted(bare.extensions[EXTENSION].public_paths),
    "no_token": client.get("/x").status_code,
    "app_token": client.get("/x", headers={"X-AIOS-Token": "app-token"}).status_code,
    "evil_host": client.get("/health", headers={"Host": "evil.example"}).status_code,
    "health": client.get("/health").status_code,
    "hooks": len(own.before_request_funcs[None]),
    "sdk_env_token": own.test_client().get(
        "/x", headers={"X-AIOS-Token": "app-token"}).status_code,
    "sdk_own_token": own.test_client().get(
        "/x", headers={"X-AIOS-Token": "the-sdks-own"}).status_code,
}))
"""


@pytest.mark.process
def test_the_app_site_gives_every_bare_flask_app_the_edge() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": f"{APP_SITE}{os.pathsep}{ROOT}",
        "AIOS_TOKEN": "app-token",
    }
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen == {
        "public": ["/health"],
        "no_token": 403,
        "app_token": 200,
        "evil_host": 421,
        "health": 404,  # public, and absent from this app: a JSON 404
        "hooks": 1,  # installed once although the SDK installs its own edge too
        "sdk_env_token": 403,
        "sdk_own_token": 200,
    }
