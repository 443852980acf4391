"""The SDK's app service through Flask's test client (no sockets)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from flask.testing import FlaskClient

from aios_protocol.messages import AppReply
from aios_sdk import AIOSAgent, create_app, tool

TOKEN = "test-token-123"
AUTH = {"X-AIOS-Token": TOKEN}


class Scripted(AIOSAgent):
    """Replies with whatever the test put in `next_reply` (or raises it)."""

    name = "Scripted"
    description = "answers as told"
    icon = "🧪"
    role_prompt = "you do as the test says"

    def __init__(self) -> None:
        self.next_reply: Any = None
        self.calls: list[tuple[Any, Any, Any]] = []

    def handle(self, instruction, context, action_request=None):
        self.calls.append((instruction, context, action_request))
        if isinstance(self.next_reply, BaseException):
            raise self.next_reply
        return self.next_reply

    @tool(name="multiply", desc="multiply two integers")
    def multiply(self, a: int, b: int = 2) -> int:
        return a * b

    @tool(name="explode")
    def explode(self) -> None:
        raise RuntimeError("boom inside the tool")

    @tool(name="opaque")
    def opaque(self) -> object:
        return object()


@pytest.fixture
def agent() -> Scripted:
    return Scripted()


@pytest.fixture
def client(agent: Scripted) -> FlaskClient:
    return create_app(agent, token=TOKEN).test_client()


def post(client: FlaskClient, path: str, body: Any, headers: dict | None = None) -> Any:
    return client.post(path, json=body, headers=AUTH if headers is None else headers)


def test_health_is_public_and_names_the_app(client: FlaskClient) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json == {"status": "ok", "app_id": "scripted", "name": "Scripted"}


@pytest.mark.parametrize(
    "headers", [{}, {"X-AIOS-Token": "wrong"}, {"X-AIOS-Token": TOKEN + "x"}]
)
def test_token_is_required_everywhere_but_health(
    client: FlaskClient, agent: Scripted, headers: dict
) -> None:
    agent.next_reply = {"status": "ok", "view_type": "text", "data": {}}
    assert client.get("/manifest", headers=headers).status_code == 403
    assert post(client, "/handle", {"instruction": "x"}, headers).status_code == 403
    assert post(client, "/tools/multiply", {"args": {"a": 1}}, headers).status_code == 403
    assert agent.calls == []


def test_non_loopback_host_is_refused(client: FlaskClient) -> None:
    response = client.get("/health", headers={"Host": "evil.example"})
    assert response.status_code == 421


def test_handle_gets_plain_dicts_and_reply_is_validated(
    client: FlaskClient, agent: Scripted
) -> None:
    agent.next_reply = {
        "status": "ok",
        "view_type": "list",
        "data": {"items": [{"title": "七里香"}]},
        "actions": [{"type": "button", "label": "播放", "action_id": "play"}],
        "message": "好",
    }
    body = {
        "instruction": None,
        "context": {"session_id": "sess_1", "role": "r", "extra_key": 1},
        "action_request": {"action_id": "play", "params": {"song_id": "s_001"}},
    }
    response = post(client, "/handle", body)
    assert response.status_code == 200
    reply = response.json
    assert reply["status"] == "ok" and reply["view_type"] == "list"
    assert reply["data"] == {"items": [{"title": "七里香"}]}
    assert reply["actions"][0]["action_id"] == "play"
    instruction, context, action = agent.calls[0]
    assert instruction is None
    assert type(context) is dict and context["session_id"] == "sess_1"
    assert context["extra_key"] == 1 and context["available_tools"] == []
    assert type(action) is dict and action["params"] == {"song_id": "s_001"}


def test_app_reply_model_is_accepted(client: FlaskClient, agent: Scripted) -> None:
    agent.next_reply = AppReply(status="ok", view_type="text", data={"content": "hi"})
    reply = post(client, "/handle", {"instruction": "hi"}).json
    assert reply["data"] == {"content": "hi"} and reply["status"] == "ok"


def test_bad_handle_request_is_400_naming_the_field(
    client: FlaskClient, agent: Scripted
) -> None:
    response = post(client, "/handle", {"instruction": 5})
    assert response.status_code == 400
    assert "instruction" in response.json["error"]["message"]
    response = post(client, "/handle", {"action_request": {"params": {}}})
    assert response.status_code == 400
    assert "action_request.action_id" in response.json["error"]["message"]
    response = client.post(
        "/handle", data="{", headers=AUTH, content_type="application/json"
    )
    assert response.status_code == 400
    response = client.post("/handle", data="{}", headers=AUTH, content_type="text/plain")
    assert response.status_code == 415
    assert agent.calls == []


def test_exception_in_handle_becomes_the_error_view(
    client: FlaskClient, agent: Scripted, caplog: pytest.LogCaptureFixture
) -> None:
    agent.next_reply = KeyError("song_id")
    with caplog.at_level(logging.ERROR):
        response = post(client, "/handle", {"instruction": "播放"})
    assert response.status_code == 200
    reply = response.json
    assert reply["status"] == "error" and reply["view_type"] == "error"
    assert reply["data"]["code"] == "app_error"
    # said plainly; the exception's text is the detail the desktop folds away
    assert reply["message"] == "「Scripted」出错了，没能完成这次请求。"
    assert reply["data"]["message"] == reply["message"]
    assert "KeyError" in reply["detail"] and "song_id" in reply["detail"]
    assert "KeyError" not in reply["message"]
    assert "handle failed" in caplog.text


def test_the_sdks_own_error_views_speak_the_users_language(
    client: FlaskClient, agent: Scripted
) -> None:
    english = {"instruction": "play", "context": {"language": "en-US"}}
    agent.next_reply = KeyError("song_id")
    failed = post(client, "/handle", english).json
    assert failed["data"]["code"] == "app_error"
    assert failed["message"] == (
        '"Scripted" ran into a problem and could not finish this request.'
    )
    assert "song_id" in failed["detail"] and "song_id" not in failed["message"]
    agent.next_reply = {"status": "ok", "data": {}}
    bad = post(client, "/handle", english).json
    assert bad["data"]["code"] == "bad_app_reply"
    assert bad["message"] == '"Scripted" answered in a way the system cannot read.'
    assert "view_type" in bad["detail"] and "view_type" not in bad["message"]
    # the context's language reaches the app as it is
    assert agent.calls[-1][1]["language"] == "en-US"


@pytest.mark.parametrize(
    ("returned", "fragment"),
    [
        ({"status": "ok", "data": {}}, "view_type"),
        ({"status": "fine", "view_type": "text", "data": {}}, "status"),
        ({"status": "ok", "view_type": "text", "data": []}, "data"),
        (
            {
                "status": "ok",
                "view_type": "text",
                "data": {},
                "actions": [{"type": "warp"}],
            },
            "actions.0",
        ),
        (
            {"status": "ok", "view_type": "text", "data": {}, "steps": [{"tool": "x"}]},
            "steps.0.step_id",
        ),
        (None, "NoneType"),
        ("just text", "str"),
        ({"status": "ok", "view_type": "text", "data": {"x": object()}}, "not JSON"),
    ],
)
def test_wrong_reply_shape_becomes_bad_app_reply_naming_the_field(
    client: FlaskClient, agent: Scripted, returned: Any, fragment: str
) -> None:
    agent.next_reply = returned
    response = post(client, "/handle", {"instruction": "x"})
    assert response.status_code == 200
    reply = response.json
    assert reply["status"] == "error" and reply["view_type"] == "error"
    assert reply["data"]["code"] == "bad_app_reply"
    assert reply["message"] == "「Scripted」的回复无法读取。"
    assert fragment in reply["detail"]  # the technical reason, folded away


def test_manifest_lists_custom_tools_with_schemas(client: FlaskClient) -> None:
    body = client.get("/manifest", headers=AUTH).json
    assert body["manifest"]["name"] == "Scripted"
    assert body["manifest"]["role_prompt"] == "you do as the test says"
    tools = {spec["name"]: spec for spec in body["tools"]}
    assert set(tools) == {"multiply", "explode", "opaque"}
    assert tools["multiply"]["custom"] is True
    assert tools["multiply"]["description"] == "multiply two integers"
    assert tools["multiply"]["parameters"]["required"] == ["a"]


def test_custom_tool_route(client: FlaskClient) -> None:
    response = post(client, "/tools/multiply", {"args": {"a": 6, "b": 7}})
    assert response.status_code == 200
    assert response.json == {"status": "ok", "result": 42}
    assert post(client, "/tools/multiply", {"args": {"a": 6}}).json["result"] == 12

    missing = post(client, "/tools/nope", {"args": {}})
    assert missing.status_code == 404 and "nope" in missing.json["error"]["message"]

    # argument types are checked by the executor against the listed schema
    # (tests/executor/test_custom_tools.py); the app refuses missing and unknown ones
    bad = post(client, "/tools/multiply", {"args": {}})
    assert bad.status_code == 400 and "'a'" in bad.json["error"]["message"]
    unknown_arg = post(client, "/tools/multiply", {"args": {"a": 1, "c": 2}})
    assert unknown_arg.status_code == 400 and "'c'" in unknown_arg.json["error"]["message"]
    not_args = post(client, "/tools/multiply", {"arguments": {"a": 1}})
    assert not_args.status_code == 400 and "arguments" in not_args.json["error"]["message"]

    failed = post(client, "/tools/explode", {"args": {}})
    assert failed.json["status"] == "error"
    assert failed.json["error"]["code"] == "tool_failed"
    assert "boom inside the tool" in failed.json["error"]["message"]

    opaque = post(client, "/tools/opaque", {"args": {}})
    assert (
        opaque.json["status"] == "error" and "not JSON" in opaque.json["error"]["message"]
    )


def test_manifest_handle_endpoint_is_served_too(tmp_path, monkeypatch) -> None:
    """An agent whose module sits beside a manifest.json naming another endpoint."""
    folder = tmp_path / "odd_app"
    folder.mkdir()
    (folder / "manifest.json").write_text(
        json.dumps({"name": "Odd", "entry": "main.py", "handle_endpoint": "/ask"}),
        encoding="utf-8",
    )
    (folder / "odd_main.py").write_text(
        "from aios_sdk import AIOSAgent\n"
        "class Odd(AIOSAgent):\n"
        "    name = 'Odd'\n    description = 'd'\n    icon = 'o'\n    role_prompt = 'r'\n"
        "    def handle(self, instruction, context, action_request=None):\n"
        "        return {'status': 'ok', 'view_type': 'text', 'data': {'content': instruction}}\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(folder))
    import odd_main  # type: ignore[import-not-found]

    client = create_app(odd_main.Odd(), token=TOKEN).test_client()
    assert post(client, "/ask", {"instruction": "a"}).json["data"] == {"content": "a"}
    assert post(client, "/handle", {"instruction": "b"}).json["data"] == {"content": "b"}
    manifest = client.get("/manifest", headers=AUTH).json["manifest"]
    assert manifest["handle_endpoint"] == "/ask" and manifest["role_prompt"] == "r"


def test_without_any_token_a_random_one_is_made_and_logged(
    agent: Scripted, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("AIOS_TOKEN", raising=False)
    with caplog.at_level(logging.WARNING, logger="aios.sdk.server"):
        app = create_app(agent)
    token = app.config["AIOS_TOKEN"]
    assert len(token) >= 24 and token in caplog.text
    client = app.test_client()
    assert client.get("/manifest").status_code == 403
    assert client.get("/manifest", headers={"X-AIOS-Token": token}).status_code == 200


def test_token_comes_from_the_environment(
    agent: Scripted, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIOS_TOKEN", "from-env")
    client = create_app(agent).test_client()
    assert client.get("/manifest", headers={"X-AIOS-Token": "from-env"}).status_code == 200
    assert client.get("/manifest", headers=AUTH).status_code == 403


def test_cors_preflight_from_loopback_origin(client: FlaskClient) -> None:
    response = client.options("/handle", headers={"Origin": "http://127.0.0.1:8000"})
    assert response.status_code == 204
    assert response.headers["Access-Control-Allow-Origin"] == "http://127.0.0.1:8000"
    evil = client.options("/handle", headers={"Origin": "https://evil.example"})
    assert evil.status_code == 403
