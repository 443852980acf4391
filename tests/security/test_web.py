"""SECURITY.md W1–W5, against every service of one real running system.

Each attack is sent as raw bytes to the controller, the executor and the SDK apps
(ports and tokens taken from the live process tree), and each test checks that the
handler did not run: no session written, no file created, no tool call logged.
"""

from __future__ import annotations

import hmac
import json
from pathlib import Path

import psutil
import pytest

from aios_runtime import edge as web
from aios_runtime.edge import token_matches
from tests.controller.system import RunningSystem
from tests.security.wire import Service, raw_request, services

BAD_HOSTS = ["evil.example", "", "foo.local", "127.0.0.1.nip.io", "evil.example:80"]
GOOD_HOSTS = ["localhost", "127.0.0.1", "[::1]"]
# apps built on the SDK; the design's bare Flask template is checked on its own below
GUARDED_APPS = ("hello_app", "echo_app", "xss_app", "slow_app")


@pytest.fixture(scope="module")
def edge(shared_system: RunningSystem) -> dict[str, Service]:
    found = {s.name: s for s in services(shared_system)}
    missing = {"controller", "executor", *GUARDED_APPS} - set(found)
    assert not missing, f"services not found in the process tree: {missing}"
    return found


def _guarded(edge: dict[str, Service]) -> list[Service]:
    return [edge["controller"], edge["executor"], *(edge[a] for a in GUARDED_APPS)]


def _protected_post(service: Service) -> tuple[str, bytes]:
    """A token-protected POST with a visible side effect, for each kind of service."""
    if service.name == "controller":
        return "/api/instruction", json.dumps({"text": "回声一下 攻击"}).encode()
    if service.name == "executor":
        body = {"tool": "file_write", "args": {"path": "pwned.txt", "content": "x"}}
        return "/call", json.dumps(body).encode()
    return "/handle", json.dumps({"instruction": "攻击", "context": {}}).encode()


class SideEffects:
    """What an attack would leave behind: sessions, a file, tool calls, events."""

    def __init__(self, system: RunningSystem):
        self.system = system

    def snapshot(self) -> tuple[int, bool, int, int]:
        sessions = len(list((self.system.state_dir / "sessions").glob("sess_*.json")))
        pwned = any(
            (self.system.state_dir / "users" / "default" / "workspaces").glob("*/pwned.txt")
        )
        calls = sum(
            len(p.read_text().splitlines())
            for p in (self.system.state_dir / "tool_calls").glob("*.jsonl")
        )
        events = self.system.get("/api/health").status_code  # the system still answers
        return sessions, pwned, calls, events


@pytest.fixture()
def effects(shared_system: RunningSystem) -> SideEffects:
    return SideEffects(shared_system)


# ---------------------------------------------------------------------- W1


@pytest.mark.slow
@pytest.mark.parametrize("host", BAD_HOSTS)
def test_w1_non_loopback_host_refused_on_every_service_handler_not_run(
    edge: dict[str, Service], effects: SideEffects, host: str
) -> None:
    before = effects.snapshot()
    for service in _guarded(edge):
        path, body = _protected_post(service)
        answer = raw_request(
            service.port,
            "POST",
            path,
            [
                ("Host", host),
                ("X-AIOS-Token", service.token),
                ("Content-Type", "application/json"),
            ],
            body,
        )
        assert answer.status in (403, 421), (service.name, host, answer.status, answer.body)
    assert effects.snapshot() == before


@pytest.mark.slow
@pytest.mark.parametrize("host", GOOD_HOSTS)
def test_w1_loopback_hosts_accepted_on_every_service(
    edge: dict[str, Service], host: str
) -> None:
    for service in _guarded(edge):
        health = "/api/health" if service.name == "controller" else "/health"
        answer = raw_request(
            service.port, "GET", health, [("Host", f"{host}:{service.port}")]
        )
        assert answer.status == 200, (service.name, host, answer.status)


@pytest.mark.slow
def test_w1_design_template_app_has_the_host_guard_and_the_token_check(
    shared_system: RunningSystem, edge: dict[str, Service], effects: SideEffects
) -> None:
    """The design's verbose template, a bare Flask app run verbatim (S-76), gets the
    edge from the app site's `sitecustomize`: the same rules as every other service."""
    template = next(s for s in services(shared_system) if s.name == "template_app")
    body = b'{"instruction": "x", "context": {}}'
    json_type = ("Content-Type", "application/json")
    host = ("Host", f"127.0.0.1:{template.port}")
    token = ("X-AIOS-Token", template.token)
    before = effects.snapshot()

    def post(headers: list[tuple[str, str]]) -> int:
        return raw_request(template.port, "POST", "/handle", headers, body).status

    for bad_host in BAD_HOSTS:
        assert post([("Host", bad_host), json_type, token]) == 421, bad_host
    assert post([host, json_type]) == 403  # no token
    assert post([host, json_type, ("X-AIOS-Token", "wrong-token")]) == 403
    assert post([host, json_type, ("X-AIOS-Token", edge["controller"].token)]) == 403
    assert post([host, json_type, token, ("Origin", "https://evil.example")]) == 403
    assert post([host, ("Content-Type", "text/plain"), token]) == 415
    assert effects.snapshot() == before
    answer = raw_request(template.port, "POST", "/handle", [host, json_type, token], body)
    assert answer.status == 200 and json.loads(answer.body)["status"] == "ok"


# ---------------------------------------------------------------------- W2


@pytest.mark.slow
@pytest.mark.parametrize(
    "origin", ["https://evil.example", "null", "http://127.0.0.1.nip.io"]
)
def test_w2_cross_site_origin_refused_on_every_service(
    edge: dict[str, Service], effects: SideEffects, origin: str
) -> None:
    before = effects.snapshot()
    for service in _guarded(edge):
        path, body = _protected_post(service)
        headers = [
            ("Host", f"127.0.0.1:{service.port}"),
            ("Origin", origin),
            ("X-AIOS-Token", service.token),
            ("Content-Type", "application/json"),
        ]
        answer = raw_request(service.port, "POST", path, headers, body)
        assert answer.status == 403, (service.name, origin, answer.status)
    assert effects.snapshot() == before


# ---------------------------------------------------------------------- W3


@pytest.mark.slow
def test_w3_text_plain_json_post_without_token_rejected_without_effect(
    edge: dict[str, Service], effects: SideEffects
) -> None:
    before = effects.snapshot()
    for service in _guarded(edge):
        path, body = _protected_post(service)
        host = ("Host", f"127.0.0.1:{service.port}")
        simple = raw_request(
            service.port, "POST", path, [host, ("Content-Type", "text/plain")], body
        )
        assert simple.status == 403, (service.name, simple.status)
        # even with the token, a "simple" content type is not parsed as JSON
        typed = raw_request(
            service.port,
            "POST",
            path,
            [host, ("Content-Type", "text/plain"), ("X-AIOS-Token", service.token)],
            body,
        )
        assert typed.status == 415, (service.name, typed.status)
    assert effects.snapshot() == before


# ---------------------------------------------------------------------- W4


@pytest.mark.slow
@pytest.mark.parametrize("token", [None, "", "wrong-token", "x" * 4096])
def test_w4_missing_or_wrong_token_is_403_on_every_service(
    edge: dict[str, Service], effects: SideEffects, token: str | None
) -> None:
    before = effects.snapshot()
    for service in _guarded(edge):
        path, body = _protected_post(service)
        headers = [
            ("Host", f"127.0.0.1:{service.port}"),
            ("Content-Type", "application/json"),
        ]
        if token is not None:
            headers.append(("X-AIOS-Token", token))
        answer = raw_request(service.port, "POST", path, headers, body)
        assert answer.status == 403, (service.name, answer.status)
    assert effects.snapshot() == before


@pytest.mark.slow
def test_w4_another_services_token_is_refused(edge: dict[str, Service]) -> None:
    """Tokens are per process: the controller's does not open an app, an app's not the API."""
    controller, hello, echo = edge["controller"], edge["hello_app"], edge["echo_app"]
    pairs = [(hello, controller.token), (echo, hello.token), (controller, echo.token)]
    for service, token in pairs:
        path, body = _protected_post(service)
        headers = [
            ("Host", f"127.0.0.1:{service.port}"),
            ("Content-Type", "application/json"),
            ("X-AIOS-Token", token),
        ]
        assert raw_request(service.port, "POST", path, headers, body).status == 403


@pytest.mark.slow
def test_w4_tokens_are_distinct_random_and_compared_in_constant_time(
    edge: dict[str, Service], monkeypatch: pytest.MonkeyPatch
) -> None:
    tokens = [s.token for s in edge.values()]
    assert len(set(tokens)) == len(tokens)
    assert all(len(t) >= 24 for t in tokens)  # ≥ 144 bits of randomness each
    compared: list[tuple[bytes, bytes]] = []
    real = web.compare_digest
    assert real is hmac.compare_digest  # the standard library's constant-time comparison

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(web, "compare_digest", spy)
    check = token_matches("the-right-token")
    assert check("the-wrong-token") is None and check("the-right-token") == "controller"
    assert len(compared) == 2  # every comparison went through compare_digest


# ---------------------------------------------------------------------- W5


@pytest.mark.slow
def test_w5_every_listening_socket_is_on_127_0_0_1(shared_system: RunningSystem) -> None:
    root = psutil.Process(shared_system.proc.pid)
    listening = []
    for proc in [root, *root.children(recursive=True)]:
        try:
            conns = proc.net_connections(kind="inet")
            name = " ".join(proc.cmdline())
        except psutil.Error:
            continue
        listening += [(name, c.laddr) for c in conns if c.status == psutil.CONN_LISTEN]
    names = " ".join(n for n, _ in listening)
    assert "main.py" in names and "executor" in names  # apps and executor were seen
    # the design's template asks for 0.0.0.0; the app site hook makes it loopback
    template = next(s for s in services(shared_system) if s.name == "template_app")
    assert any(addr.port == template.port for _, addr in listening)
    wrong = [(n, a) for n, a in listening if a.ip != "127.0.0.1"]
    assert wrong == [], f"sockets listening beyond 127.0.0.1: {wrong}"


@pytest.mark.slow
def test_w5_app_cannot_act_as_another_app_at_the_executor(
    shared_system: RunningSystem, edge: dict[str, Service]
) -> None:
    echo, executor = edge["echo_app"], edge["executor"]
    body = {
        "tool": "file_write",
        "app_id": "hello_app",
        "args": {"path": "w5.txt", "content": "x"},
    }
    answer = raw_request(
        executor.port,
        "POST",
        "/call",
        [
            ("Host", "127.0.0.1"),
            ("X-AIOS-Token", echo.token),
            ("Content-Type", "application/json"),
        ],
        json.dumps(body).encode(),
    )
    assert answer.status == 200 and json.loads(answer.body)["status"] == "ok"
    assert (shared_system.workspace("echo_app") / "w5.txt").exists()  # acted as itself
    assert not (shared_system.workspace("hello_app") / "w5.txt").exists()


@pytest.mark.slow
def test_w5_app_cannot_reach_another_apps_workspace(
    shared_system: RunningSystem, edge: dict[str, Service]
) -> None:
    echo, executor = edge["echo_app"], edge["executor"]
    greeting = shared_system.workspace("hello_app") / "greeting.txt"
    for path in [
        str(greeting),
        "../hello_app/greeting.txt",
        "../../hello_app/greeting.txt",
    ]:
        body = {"tool": "file_read", "args": {"path": path}}
        answer = raw_request(
            executor.port,
            "POST",
            "/call",
            [
                ("Host", "127.0.0.1"),
                ("X-AIOS-Token", echo.token),
                ("Content-Type", "application/json"),
            ],
            json.dumps(body).encode(),
        )
        result = json.loads(answer.body)
        assert result["status"] == "error" and result["code"] == "path_outside_workdir"


@pytest.mark.slow
def test_w5_app_token_opens_no_controller_route_but_the_llm_ones(
    shared_system: RunningSystem, edge: dict[str, Service]
) -> None:
    echo = edge["echo_app"]
    for path in ["/api/apps", "/api/settings", "/api/confirmations", "/api/events"]:
        response = shared_system.get(path, headers={"X-AIOS-Token": echo.token}, timeout=5)
        assert response.status_code == 403, path
    response = shared_system.post(
        "/api/instruction", {"text": "回声一下 x"}, headers={"X-AIOS-Token": echo.token}
    )
    assert response.status_code == 403


def test_w4_every_api_key_is_masked_by_get_settings_and_kept_when_echoed(
    tmp_path: Path,
) -> None:
    from aios_runtime.settings import Settings
    from controller.settings_store import SettingsStore

    keys = {
        "voice_api_key": "vk-voice-abcdef9876",
        "api_keys": ["client-key-aaaa1111", "client-key-bbbb2222"],
        "app_settings": {"music_app": {"api_key": "mk-music-4444"}},
    }
    llm_key = "sk-deep-0123456789"
    settings = Settings.model_validate({**keys, "llm": {"api_key": llm_key}})
    store = SettingsStore(tmp_path / "settings.json", settings)
    shown = store.masked()
    assert shown["llm"]["api_key"] == "••••6789" and shown["voice_api_key"] == "••••9876"
    assert shown["api_keys"] == ["••••1111", "••••2222"]
    assert shown["app_settings"]["music_app"]["api_key"] == "••••4444"  # at any depth
    text = json.dumps(shown)
    assert "sk-deep" not in text and "vk-voice" not in text and "client-key" not in text
    assert "mk-music" not in text
    store.update(shown)  # the page sends the masked values back unchanged
    assert store.get().model_dump(include=set(keys)) == keys  # nothing changed
    assert store.get().llm.api_key == llm_key
    store.update({"voice_api_key": "vk-new-key-5555"})
    saved = json.loads((tmp_path / "settings.json").read_text())
    assert saved == {"voice_api_key": "vk-new-key-5555"}
    assert store.get().llm.api_key == llm_key
