"""The shared HTTP edge (aios_runtime.edge): loopback guard, token, strict JSON (W1–W4, J1)."""

from __future__ import annotations

import pytest
import requests
from flask import Flask, jsonify

from aios_protocol.messages import InstructionRequest
from aios_runtime.edge import create_service, public, read_json, start_server, token_matches

TOKEN = "s3cret-token"


@pytest.fixture()
def calls() -> list[dict]:
    return []


@pytest.fixture()
def app(calls: list[dict]) -> Flask:
    service = create_service("test", token_matches(TOKEN), max_body=1 << 20)

    @service.get("/health")
    @public
    def health():
        return {"status": "ok"}

    @service.post("/echo")
    def echo():
        body = read_json(InstructionRequest)
        calls.append(body.dump())
        return jsonify(body.dump())

    return service


@pytest.fixture()
def client(app: Flask):
    return app.test_client()


def post(
    client,
    body: bytes | str,
    *,
    token: str | None = TOKEN,
    ctype: str = "application/json",
    **headers,
):
    if token is not None:
        headers["X-AIOS-Token"] = token
    return client.post("/echo", data=body, headers={"Content-Type": ctype, **headers})


@pytest.mark.parametrize(
    "host",
    ["evil.example", "", "foo.local", "127.0.0.1.nip.io", "localhost.evil.example:80"],
)
def test_w1_non_loopback_host_refused_before_the_handler(client, calls, host: str) -> None:
    response = post(client, '{"text": "hi"}', Host=host)
    assert response.status_code == 421
    assert response.get_json()["error"]["code"] == "host_not_allowed"
    assert client.get("/health", headers={"Host": host}).status_code == 421
    assert calls == []


@pytest.mark.parametrize(
    "host",
    ["localhost", "localhost:5000", "127.0.0.1", "127.0.0.1:8080", "[::1]", "[::1]:5000"],
)
def test_w1_loopback_hosts_accepted(client, host: str) -> None:
    assert post(client, '{"text": "hi"}', Host=host).status_code == 200


@pytest.mark.parametrize(
    "origin", ["https://evil.example", "null", "http://127.0.0.1.nip.io"]
)
def test_w2_cross_site_origin_refused(client, calls, origin: str) -> None:
    response = post(client, '{"text": "hi"}', Origin=origin)
    assert response.status_code == 403
    assert calls == []


def test_w2_loopback_origin_allowed_with_cors(client) -> None:
    response = post(client, '{"text": "hi"}', Origin="http://127.0.0.1:5000")
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == "http://127.0.0.1:5000"


def test_w3_text_plain_without_token_rejected_without_side_effect(client, calls) -> None:
    assert post(client, '{"text": "hi"}', token=None, ctype="text/plain").status_code == 403
    assert post(client, '{"text": "hi"}', ctype="text/plain").status_code == 415
    assert calls == []


@pytest.mark.parametrize("token", [None, "", "wrong", TOKEN + "x", TOKEN[:-1]])
def test_w4_missing_or_wrong_token(client, calls, token) -> None:
    response = post(client, '{"text": "hi"}', token=token)
    assert response.status_code == 403
    assert response.get_json()["error"]["code"] == "forbidden"
    assert calls == []


def test_health_is_public(client) -> None:
    assert client.get("/health").get_json() == {"status": "ok"}


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"[" * 200_000, 400, "invalid_request"),
        (b'{"text": "hi"', 400, "invalid_request"),
        (b'{"text": NaN}', 400, "invalid_request"),
        (b'{"text": "\xff\xfe"}', 400, "invalid_request"),
        (b'{"text": 12}', 400, "invalid_request"),
        (b'{"text": "' + b"x" * (2 << 20) + b'"}', 413, "payload_too_large"),
    ],
    ids=["nested", "cut-off", "nan", "bad-utf8", "wrong-type", "too-large"],
)
def test_j1_malformed_bodies(client, calls, body: bytes, status: int, code: str) -> None:
    response = post(client, body)
    assert response.status_code == status
    assert response.get_json()["error"]["code"] == code
    assert calls == []


def test_j1_wrong_field_named_in_error(client) -> None:
    response = post(client, '{"text": ""}')
    assert response.status_code == 400
    assert "text" in response.get_json()["error"]["message"]


def test_unknown_route_is_json_404(client) -> None:
    response = client.get("/nope", headers={"X-AIOS-Token": TOKEN})
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "not_found"


def test_real_server_on_loopback(app: Flask) -> None:
    server = start_server(app, 0)
    try:
        assert server.url.startswith("http://127.0.0.1:")
        response = requests.post(
            server.url + "/echo",
            json={"text": "你好"},
            headers={"X-AIOS-Token": TOKEN},
            timeout=5,
        )
        assert response.json()["text"] == "你好"
    finally:
        server.stop()
