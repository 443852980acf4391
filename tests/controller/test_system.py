"""End to end: one real system (controller, executor, apps as processes) per module.

Routing to the shipped hello_app, compound instructions, the steps loop with the
design's verbose template, actions, files, events, settings, the UI snapshot, the
controller's web edge (SECURITY.md W1–W4) and supervision (C1–C4).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import requests

from controller.sessions import load_session_file
from tests.controller.system import (
    RunningSystem,
    add_template_app,
    build_apps_dir,
    copy_echo,
    launch,
)
from tests.procs import held_port, pid_seen_by_itself

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def busy_port() -> Iterator[int]:
    """A port some other program holds: port_app's preferred one (C4)."""
    with held_port() as port:
        yield port


@pytest.fixture(scope="module")
def system(
    tmp_path_factory: pytest.TempPathFactory, busy_port: int
) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("system")
    apps = build_apps_dir(root / "apps", test_apps=("echo_app", "crash_app", "broken_app"))
    copy_echo(apps, "victim_app", "受害者应用")
    copy_echo(apps, "frozen_app", "冻结应用")
    copy_echo(apps, "port_app", "端口应用")
    add_template_app(apps)
    ports_file = root / "ports.json"
    ports_file.write_text(json.dumps({"port_app": busy_port}))
    running = launch(root, apps, ports=str(ports_file))
    try:
        yield running
    finally:
        running.stop()


# ------------------------------------------------------------------ basics


def test_apps_listed_and_broken_manifest_reported(system: RunningSystem) -> None:
    apps = system.apps()
    assert apps["hello_app"]["status"] == "running"
    assert apps["hello_app"]["name"] == "Hello小AI" and apps["hello_app"]["port"]
    assert apps["echo_app"]["status"] == "running"
    assert apps["template_app"]["status"] == "running"
    broken = apps["broken_app"]
    assert broken["status"] == "failed"
    assert "entry" in broken["error"] and "manifest.json" in broken["error"]
    live_ports = json.loads((system.state_dir / "ports.json").read_text())
    assert live_ports["hello_app"] == apps["hello_app"]["port"]
    assert str(live_ports["controller"]) in system.url
    assert "executor" in live_ports
    health = requests.get(system.url + "/api/health", timeout=5).json()
    assert health["status"] == "ok"


def test_greeting_is_routed_to_hello_app(system: RunningSystem) -> None:
    response = system.say("跟我打个招呼")
    assert response["session_id"].startswith("sess_")
    [task] = response["tasks"]
    assert task["app_id"] == "hello_app" and task["status"] == "done"
    result = task["result"]
    assert result["view_type"] == "text"
    assert "你好" in result["data"]["content"]
    assert result["actions"][0]["action_id"] == "again"
    assert response["message"] == "已回复"


def test_compound_instruction_becomes_two_dependent_tasks(system: RunningSystem) -> None:
    response = system.say("跟我打个招呼，然后回声一下 abc")
    first, second = response["tasks"]
    assert (first["app_id"], second["app_id"]) == ("hello_app", "echo_app")
    assert second["depends_on"] == [first["task_id"]]
    assert first["status"] == second["status"] == "done"
    context = second["result"]["data"]["context"]
    assert context["upstream"][0]["app_id"] == "hello_app"
    assert "你好" in context["upstream"][0]["data"]["content"]
    # S-41, as the app received it
    assert context["role"] == "你是一个回声小AI，负责重复用户说的话"
    assert Path(context["workdir"]).is_absolute()
    assert context["workdir"] == str(system.workspace("echo_app").resolve())
    assert context["cwd_state"]["files"] == []
    assert "file_read" in context["available_tools"]
    assert context["session_id"] == response["session_id"]
    assert "tool_results" not in context
    # what the supervisor put in its environment
    data = second["result"]["data"]
    assert data["settings"] == {"flavour": "test"}  # config.json app_settings.echo_app
    assert data["env"]["AIOS_APP_ID"] == "echo_app"
    assert data["env"]["AIOS_WORKDIR"] == context["workdir"]
    live = json.loads((system.state_dir / "ports.json").read_text())
    assert data["env"]["AIOS_EXECUTOR_URL"] == f"http://127.0.0.1:{live['executor']}"
    assert data["env"]["AIOS_CONTROLLER_URL"] == system.url


def test_session_memory_reaches_the_next_call(system: RunningSystem) -> None:
    first = system.say("回声一下 第一句")
    sid = first["session_id"]
    second = system.say("回声一下 第二句", session_id=sid)
    context = second["tasks"][0]["result"]["data"]["context"]
    assert "第一句" in context["history_summary"]
    assert context["cwd_state"]["last_echo"] == "回声一下 第一句"
    saved = load_session_file(system.state_dir / "sessions" / f"{sid}.json")
    assert [t["text"] for t in saved["history"]] == ["回声一下 第一句", "回声一下 第二句"]
    assert saved["agent_states"]["echo_app"]["last_echo"] == "回声一下 第二句"
    assert len(saved["completed_tasks"]) == 2


def test_no_match_says_so_in_one_sentence_and_where_the_apps_are(
    system: RunningSystem,
) -> None:
    response = system.say("今天天气如何")
    assert response["tasks"] == []
    assert response["message"] == "没有应用能做这件事。开始菜单里列出了每个应用能做什么。"


def test_action_is_forwarded_per_s55(system: RunningSystem) -> None:
    body = {
        "session_id": "sess_action01",
        "action_id": "play",
        "type": "button",
        "params": {"song_id": "s_001"},
        "value": "ignored for a button",
    }
    response = system.post("/api/apps/echo_app/action", body)
    assert response.status_code == 200, response.text
    reply = response.json()
    assert reply["session_id"] == "sess_action01"
    assert reply["data"]["content"] == "echo: None"
    assert reply["data"]["action_request"] == {
        "action_id": "play",
        "params": {"song_id": "s_001"},
        "session_id": "sess_action01",
    }


def test_open_unknown_app_is_404(system: RunningSystem) -> None:
    response = system.post("/api/apps/no_such_app/open", {})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_design_template_does_not_loop_and_renders(system: RunningSystem) -> None:
    response = system.post("/api/apps/template_app/open", {})
    assert response.status_code == 200, response.text
    reply = response.json()
    assert reply["status"] == "ok" and reply["view_type"] == "list"
    assert reply["data"] == {"items": []}
    assert reply["actions"][0]["action_id"] == "refresh"
    assert reply.get("steps", []) == []
    saved = load_session_file(system.state_dir / "sessions" / f"{reply['session_id']}.json")
    rounds = [c["round"] for c in saved["tool_calls_log"] if c["app_id"] == "template_app"]
    assert rounds == [1]  # one round of steps, then the view
    # the refresh button goes through the same loop
    again = system.post(
        "/api/apps/template_app/action",
        {"session_id": reply["session_id"], "action_id": "refresh", "type": "button"},
    ).json()
    assert again["view_type"] == "list"


def test_events_stream_over_sse(system: RunningSystem) -> None:
    system.say("跟我打个招呼")
    response = requests.get(
        f"{system.url}/api/events",
        params={"since": 0, "limit": 400, "token": system.token},
        stream=True,
        timeout=10,
    )
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/event-stream")
    types: set[str] = set()
    for line in response.iter_lines(decode_unicode=True):
        if line and line.startswith("data: "):
            event = json.loads(line[6:])
            types.add(event["type"])
            if {"app_status", "task_started", "task_done", "speak"} <= types:
                break
    response.close()
    assert {"app_status", "task_started", "task_done", "speak"} <= types


def test_workspace_files_are_served_confined(system: RunningSystem) -> None:
    path = "/api/apps/hello_app/files/greeting.txt"
    whole = system.get(path)
    assert whole.status_code == 200 and whole.content.decode() == "你好"
    part = system.get(path, headers={**system.headers, "Range": "bytes=0-2"})
    assert part.status_code == 206 and part.content.decode() == "你"
    by_query = requests.get(f"{system.url}{path}?token={system.token}", timeout=5)
    assert by_query.status_code == 200
    for bad in ("..%2Fmanifest.json", "%2E%2E/%2E%2E/echo_app/main.py"):
        denied = system.get(f"/api/apps/hello_app/files/{bad}")
        assert denied.status_code in (403, 404), bad
        assert "你好" not in denied.text and "import" not in denied.text


def test_ui_snapshot_goes_to_the_system_cache(system: RunningSystem) -> None:
    snapshot = {
        "viewport": {"width": 1280, "height": 800},
        "elements": [
            {"id": "btn_play", "type": "button", "label": "播放", "x": 100, "y": 200}
        ],
    }
    assert system.post("/api/ui/snapshot", snapshot).status_code == 200
    response = system.say("回声 快照")
    data = response["tasks"][0]["result"]["data"]
    assert data["snapshot"]["elements"][0]["id"] == "btn_play"


def test_settings_mask_the_key_and_keep_it_when_echoed(system: RunningSystem) -> None:
    config_path = system.state_dir.parent / "config.json"
    config_before = config_path.read_text()
    put = requests.put(
        system.url + "/api/settings",
        json={"llm": {"api_key": "sk-test-1234567890"}},
        headers=system.headers,
        timeout=10,
    )
    assert put.status_code == 200, put.text
    assert put.json()["llm"]["api_key"] == "••••7890"
    shown = system.get("/api/settings").json()
    assert shown["llm"]["api_key"] == "••••7890"
    shown["voice_rate"] = 1.2
    echoed = requests.put(
        system.url + "/api/settings", json=shown, headers=system.headers, timeout=10
    )
    assert echoed.status_code == 200, echoed.text
    # what the user changed is saved in the state folder; config.json is untouched
    saved = json.loads((system.state_dir / "settings.json").read_text())
    assert saved == {"llm": {"api_key": "sk-test-1234567890"}, "voice_rate": 1.2}
    assert config_path.read_text() == config_before
    assert system.get("/api/settings").json()["supervisor"]["max_restarts"] == 3
    bad = requests.put(
        system.url + "/api/settings",
        json={"voice_rate": -1},
        headers=system.headers,
        timeout=10,
    )
    assert bad.status_code == 400 and "voice_rate" in bad.json()["error"]["message"]


# --------------------------------------------------------- the web edge (W1–W4)


def raw_request(
    system: RunningSystem,
    method: str,
    path: str,
    headers: dict[str, str],
    body: bytes | None = None,
) -> tuple[int, bytes]:
    port = int(system.url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for key, value in headers.items():
        conn.putheader(key, value)
    if body is not None:
        conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, data


def session_files(system: RunningSystem) -> set[str]:
    return {p.name for p in (system.state_dir / "sessions").glob("*.json")}


def test_w1_bad_host_refused_before_the_handler(system: RunningSystem) -> None:
    port = system.url.rsplit(":", 1)[1]
    body = json.dumps({"text": "跟我打个招呼", "session_id": "sess_w1host"}).encode()
    for host in (
        "evil.example",
        "",
        "foo.local",
        "127.0.0.1.nip.io",
        f"evil.example:{port}",
    ):
        status, _ = raw_request(
            system,
            "POST",
            "/api/instruction",
            {
                "Host": host,
                "Content-Type": "application/json",
                "X-AIOS-Token": system.token,
            },
            body,
        )
        assert status == 421, host
    assert "sess_w1host.json" not in session_files(system)
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"):
        status, _ = raw_request(system, "GET", "/api/health", {"Host": host})
        assert status == 200, host


def test_w2_cross_site_origin_refused(system: RunningSystem) -> None:
    response = system.post(
        "/api/instruction",
        {"text": "跟我打个招呼", "session_id": "sess_w2origin"},
        headers={**system.headers, "Origin": "https://evil.example"},
    )
    assert response.status_code == 403
    assert "sess_w2origin.json" not in session_files(system)
    same_site = system.get("/api/apps", headers={**system.headers, "Origin": system.url})
    assert same_site.status_code == 200


def test_w3_text_plain_json_without_token_has_no_effect(system: RunningSystem) -> None:
    before = session_files(system)
    body = json.dumps({"text": "跟我打个招呼", "session_id": "sess_w3plain"}).encode()
    port = system.url.rsplit(":", 1)[1]
    status, _ = raw_request(
        system,
        "POST",
        "/api/instruction",
        {"Host": f"127.0.0.1:{port}", "Content-Type": "text/plain"},
        body,
    )
    assert status == 403
    with_token = requests.post(
        system.url + "/api/instruction",
        data=body,
        headers={"Content-Type": "text/plain", **system.headers},
        timeout=10,
    )
    assert with_token.status_code == 415
    assert session_files(system) == before


def test_w4_missing_or_wrong_token_refused(system: RunningSystem) -> None:
    assert requests.get(system.url + "/api/apps", timeout=5).status_code == 403
    wrong = requests.get(
        system.url + "/api/apps", headers={"X-AIOS-Token": system.token + "x"}, timeout=5
    )
    assert wrong.status_code == 403
    assert requests.get(f"{system.url}/api/apps?token=nope", timeout=5).status_code == 403
    posted = requests.post(
        f"{system.url}/api/instruction?token={system.token}",
        json={"text": "跟我打个招呼"},
        timeout=5,
    )
    assert posted.status_code == 403  # ?token= only for GET
    assert requests.get(system.url + "/api/health", timeout=5).status_code == 200


# ------------------------------------------------------ supervision (C1–C4)


def test_c1_killed_app_is_restarted_and_calls_meanwhile_fail_clearly(
    system: RunningSystem,
) -> None:
    before = system.wait_app("victim_app", "running")
    victim = psutil.Process(before["pid"])
    victim.send_signal(signal.SIGKILL)
    victim.wait(5)
    meanwhile = system.post("/api/apps/victim_app/open", {}).json()
    assert meanwhile["status"] == "error"
    assert meanwhile["data"]["code"] in ("app_unavailable", "app_unreachable")
    # the user reads the app's name in a plain sentence; its id and state are the detail
    assert before["name"] in meanwhile["message"]
    assert "victim_app" in meanwhile["detail"]
    after = system.wait_for(
        lambda: (
            (row := system.apps()["victim_app"])["status"] == "running"
            and row["pid"] != before["pid"]
            and row
        ),
        what="victim_app restarted",
    )
    assert after["restarts"] >= 1
    reply = system.post("/api/apps/victim_app/open", {}).json()
    assert reply["status"] == "ok"
    assert reply["data"]["pid"] == pid_seen_by_itself(after["pid"])  # the new process


def test_c2_app_crashing_at_start_is_retried_with_back_off_then_failed(
    system: RunningSystem,
) -> None:
    row = system.wait_app("crash_app", "failed", timeout=60)
    assert row["restarts"] == 3  # max_restarts, no tight loop
    assert "boom at start" in row["error"] and "gave up" in row["error"]
    log = (system.state_dir / "logs" / "crash_app.log").read_text()
    starts = [float(t) for t in re.findall(r"boom at start ([0-9.]+)", log)]
    assert len(starts) == 4
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    for gap, delay in zip(gaps, [0.5, 1.0, 1.8], strict=True):
        assert gap >= delay  # each retry waited at least its growing back-off
    reply = system.post("/api/apps/crash_app/open", {}).json()
    assert reply["data"]["code"] == "app_unavailable"
    assert reply["message"] == f"「{row['name']}」现在不可用，请稍后再试。"
    assert "boom at start" in reply["detail"]  # the why, folded away


def test_c3_app_that_stops_answering_is_killed_and_restarted(system: RunningSystem) -> None:
    before = system.wait_app("frozen_app", "running")
    frozen = psutil.Process(before["pid"])
    os.kill(before["pid"], signal.SIGSTOP)  # accepts connections, never answers
    after = system.wait_for(
        lambda: (
            (row := system.apps()["frozen_app"])["status"] == "running"
            and row["pid"] != before["pid"]
            and row
        ),
        what="frozen_app replaced",
    )
    assert not frozen.is_running() or frozen.status() == psutil.STATUS_ZOMBIE
    reply = system.post("/api/apps/frozen_app/open", {}).json()
    assert reply["status"] == "ok"
    assert reply["data"]["pid"] == pid_seen_by_itself(after["pid"])  # the new process


def test_c4_taken_preferred_port_falls_back_and_is_recorded(
    system: RunningSystem, busy_port: int
) -> None:
    row = system.wait_app("port_app", "running")
    assert row["port"] != busy_port
    live = json.loads((system.state_dir / "ports.json").read_text())
    assert live["port_app"] == row["port"]
    assert system.post("/api/apps/port_app/open", {}).json()["status"] == "ok"
