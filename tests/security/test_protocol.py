"""SECURITY.md J1 (malformed requests at every edge) and J2 (an app that answers
garbage, a wrong shape, a 500, 20 MB or nothing), against the shared real system;
J2 also through the desktop in Chromium."""

from __future__ import annotations

import json
import threading
import time

import pytest

from tests.controller.system import RunningSystem
from tests.security.conftest import open_desktop, say_in_desktop
from tests.security.wire import RawAnswer, Service, raw_request, services

pytestmark = pytest.mark.slow

NESTED = b"[" * 200_000 + b"]" * 200_000


@pytest.fixture(scope="module")
def edges(shared_system: RunningSystem) -> list[tuple[Service, str, dict]]:
    """(service, JSON route, a valid body) for the controller, the executor and an app."""
    found = {s.name: s for s in services(shared_system)}
    return [
        (found["controller"], "/api/instruction", {"text": "回声一下 j1"}),
        (
            found["executor"],
            "/call",
            {"tool": "cache_get", "args": {"key": "k"}, "app_id": "echo_app"},
        ),
        (found["echo_app"], "/handle", {"instruction": "j1", "context": {}}),
    ]


def post(
    service: Service, path: str, body: bytes, content_type: str = "application/json", **kw
) -> RawAnswer:
    headers = [
        ("Host", f"127.0.0.1:{service.port}"),
        ("X-AIOS-Token", service.token),
        ("Content-Type", content_type),
    ]
    return raw_request(service.port, "POST", path, headers, body, **kw)


def error_code(answer: RawAnswer) -> str:
    return json.loads(answer.body)["error"]["code"]


# ---------------------------------------------------------------------- J1


@pytest.mark.parametrize(
    ("name", "body", "status"),
    [
        ("deeply nested", NESTED, 400),
        ("cut-off JSON", b'{"text": "abc', 400),
        ("NaN", b'{"text": NaN, "tool": NaN, "instruction": NaN}', 400),
        ("Infinity", b'{"x": Infinity}', 400),
        ("invalid UTF-8", b'{"text": "\xff\xfe\xfa"}', 400),
        ("not an object", b'"just a string"', 400),
        ("empty", b"", 400),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_j1_malformed_bodies_are_400_never_500(
    edges: list[tuple[Service, str, dict]], name: str, body: bytes, status: int
) -> None:
    for service, path, _ in edges:
        answer = post(service, path, body)
        assert answer.status == status, (
            service.name,
            name,
            answer.status,
            answer.body[:200],
        )
        assert error_code(answer) == "invalid_request"


def test_j1_wrong_types_are_400_naming_the_field(
    edges: list[tuple[Service, str, dict]],
) -> None:
    wrong = {
        "controller": {"text": 5, "session_id": ["x"]},
        "executor": {"tool": ["shell_exec"], "args": "not an object"},
        "echo_app": {"instruction": {"a": 1}, "context": "nope"},
    }
    for service, path, _ in edges:
        answer = post(service, path, json.dumps(wrong[service.name]).encode())
        assert answer.status == 400, (service.name, answer.status)
        message = json.loads(answer.body)["error"]["message"]
        assert any(
            field in message for field in ("text", "tool", "args", "instruction", "context")
        )


def test_j1_wrong_content_type_is_415(edges: list[tuple[Service, str, dict]]) -> None:
    for service, path, body in edges:
        for content_type in (
            "text/xml",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ):
            answer = post(service, path, json.dumps(body).encode(), content_type)
            assert answer.status == 415, (service.name, content_type, answer.status)


def test_j1_a_body_over_the_cap_is_413(edges: list[tuple[Service, str, dict]]) -> None:
    big = json.dumps({"text": "x" * (5 << 20)}).encode()
    for service, path, _ in edges:
        answer = post(service, path, big)
        assert answer.status == 413, (service.name, answer.status)


def test_j1_unknown_tool_is_a_clear_error_not_a_crash(
    edges: list[tuple[Service, str, dict]],
) -> None:
    executor = edges[1][0]
    answer = post(
        executor,
        "/call",
        json.dumps({"tool": "rm_rf_everything", "args": {}, "app_id": "echo_app"}).encode(),
    )
    result = json.loads(answer.body)
    # a failure as data (200, ToolResult) or a refused request (400): never a crash
    code = result["code"] if answer.status == 200 else result["error"]["code"]
    assert answer.status in (200, 400) and result["status"] == "error"
    assert code == "unknown_tool", result


def test_j1_a_body_that_never_completes_does_not_hurt_the_service(
    edges: list[tuple[Service, str, dict]], shared_system: RunningSystem
) -> None:
    for service, path, _ in edges:
        answer = post(service, path, b'{"text": "cut', content_length=10_000, timeout=5)
        assert answer.status in (0, 400), (service.name, answer.status)  # hung up or 400
    assert shared_system.say("回声一下 还在")["tasks"][0]["result"]["status"] == "ok"


# ---------------------------------------------------------------------- J2

ROGUE_CASES = ["乱码", "错形", "崩溃", "不答", "巨大"]


def rogue(shared_system: RunningSystem, what: str) -> dict:
    answer = shared_system.say(f"捣乱应用 {what}")
    (task,) = answer["tasks"]
    assert task["app_id"] == "rogue_app", task
    return task["result"]


@pytest.mark.parametrize(
    "what", ROGUE_CASES, ids=["garbage", "wrong_shape", "http_500", "no_answer", "huge"]
)
def test_j2_a_misbehaving_app_gets_a_clear_error_view_others_unaffected(
    shared_system: RunningSystem, what: str
) -> None:
    # an app whose call hung (the no-answer case) is restarted: wait until it runs
    shared_system.wait_app("rogue_app", "running")
    echoed: list[dict] = []

    def meanwhile() -> None:  # another app, asked while the rogue one misbehaves
        time.sleep(0.3)
        echoed.append(shared_system.say("回声一下 同时"))

    other = threading.Thread(target=meanwhile)
    other.start()
    started = time.monotonic()
    reply = rogue(shared_system, what)
    other.join(30)
    assert reply["status"] == "error" and reply["view_type"] == "error", reply
    assert reply["data"]["code"] in (
        "bad_app_reply",
        "app_unreachable",
        "app_error",
        "app_timeout",
        "http_error",
    ), reply
    assert "捣乱应用" in reply["message"] or "rogue_app" in reply["message"], reply
    assert time.monotonic() - started < 20  # bounded by app_timeout, not forever
    assert echoed and echoed[0]["tasks"][0]["result"]["status"] == "ok"
    assert shared_system.apps()["rogue_app"]["status"] in ("running", "restarting")


@pytest.mark.browser
def test_j2_the_desktop_shows_the_error_in_that_apps_window_only(
    browser: object, shared_system: RunningSystem
) -> None:
    desktop = open_desktop(browser, shared_system)
    page = desktop.page
    try:
        say_in_desktop(desktop, "回声一下 先打开")
        page.locator("#win_echo_app .view-text").wait_for()
        say_in_desktop(desktop, "捣乱应用 乱码")
        error = page.locator("#win_rogue_app .view-error")
        error.wait_for()
        # a plain message names the app; code and reason sit in the folded details
        assert "「捣乱应用」的回复无法读取" in error.inner_text()
        folded = error.text_content() or ""
        assert "bad_app_reply" in folded and "rogue_app answered" in folded
        assert page.locator("#win_echo_app .view-error").count() == 0
        say_in_desktop(desktop, "回声一下 之后")
        page.locator("#win_echo_app .view-text").get_by_text("之后").first.wait_for()
        assert desktop.errors == []
    finally:
        page.context.close()
