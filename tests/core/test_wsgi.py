"""aios_sdk.wsgi.Service through werkzeug's test client: routes with `<>` segments,
the edge rules it shares with aios_runtime.edge, and the fallback app behind it."""

from __future__ import annotations

from typing import Any

from aios_runtime.edge import create_service, token_matches
from aios_sdk.wsgi import Request, Service

AUTH = {"X-AIOS-Token": "tok"}


def _service() -> Service:
    behind = create_service("behind", token_matches("tok"))

    @behind.get("/flask/<name>")
    def flask_route(name: str) -> Any:
        return {"from": "flask", "name": name}

    service = Service("front", token_matches("tok"), fallback=behind)

    def echo(http: Request, app_id: str, verb: str) -> Any:
        raw = http.body()
        return {
            "app_id": app_id,
            "verb": verb,
            "raw": raw.decode(),
            "again": http.body() == raw,
        }

    service.route("POST", "/apps/<>/do/<>", echo)
    service.route("GET", "/health", lambda http: {"status": "ok"}, public=True)
    return service


def test_segments_are_arguments_and_the_body_is_read_once() -> None:
    client = _service().test_client()
    answer = client.post("/apps/音乐/do/play", data=b'{"a": 1}', headers=AUTH)
    assert answer.status_code == 200
    assert answer.json == {
        "app_id": "音乐",
        "verb": "play",
        "raw": '{"a": 1}',
        "again": True,
    }
    assert client.post("/apps//do/play", headers=AUTH).status_code == 404  # empty segment
    assert client.get("/apps/x/do/play", headers=AUTH).status_code == 405


def test_edge_rules_hold_on_the_lean_routes() -> None:
    client = _service().test_client()
    assert client.get("/health").json == {"status": "ok"}  # public
    assert client.post("/apps/a/do/b").status_code == 403  # no token
    refused = client.get("/health", headers={"Host": "evil.example"})
    assert (
        refused.status_code == 421 and refused.json["error"]["code"] == "host_not_allowed"
    )
    preflight = client.options("/apps/a/do/b", headers={"Origin": "http://localhost:9"})
    assert preflight.status_code == 204
    assert preflight.headers["Access-Control-Allow-Origin"] == "http://localhost:9"
    assert (
        client.options("/health", headers={"Origin": "https://evil.example"}).status_code
        == 403
    )


def test_other_paths_go_to_the_fallback_with_its_own_rules() -> None:
    client = _service().test_client()
    assert client.get("/flask/x", headers=AUTH).json == {"from": "flask", "name": "x"}
    assert client.get("/flask/x").status_code == 403  # the fallback checks the token too
    missing = client.get("/nowhere", headers=AUTH)
    assert missing.status_code == 404 and missing.json["status"] == "error"
