"""Corrupt or truncated state files at start-up.

Before a real system starts, its state folder gets a garbage session journal, a
truncated confirmation, a truncated `config.json`, a garbage live `ports.json`, a
damaged `jobs.json`, and `--ports` points at a damaged preference file. The system
starts anyway: each damaged file is named in an error (`problems` in `/api/health`,
the scheduler's `problems`, the controller's log), kept aside as
`<name>.corrupt-<time>`, and defaults are used. A damaged `permissions.json` is named
the same way and grants nothing, and the desktop says it once,
as a warning whose folded detail names each file, in the person's language.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.state_dir import StateDir
from tests.browser import desktop_page
from tests.controller.system import RunningSystem, launch
from tests.faults.conftest import build_fault_apps, task_reply

SESSION = "sess_corrupt0001"
CONFIRMATION = "conf_0123456789abcdef"


def _aside(folder: Path, name: str) -> list[Path]:
    return sorted(folder.glob(f"{name}.corrupt-*"))


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("corrupt")
    state = root / "state"
    (state / "sessions").mkdir(parents=True)
    (state / "sessions" / f"{SESSION}.json").write_bytes(b"\x00\x01garbage{{{")
    (state / "confirmations").mkdir()
    (state / "confirmations" / f"{CONFIRMATION}.json").write_text('{"confirmation_id": "co')
    (state / "ports.json").write_text("{not json")
    (state / "jobs.json").write_text('{"jobs": [\n{"id": "job_abc123", "na')
    (state / "permissions.json").write_text(
        '{"always": [{"app_id": "echo_app", "tool": 1}]}'
    )
    preferred = root / "preferred-ports.json"
    preferred.write_text('{"controller": 80')
    apps = build_fault_apps(root / "apps")
    running = launch(
        root, apps, ports=str(preferred), config='{"app_timeout": 3, "voice_ra'
    )
    try:  # on the default settings apps start at first use: the test's calls start them
        yield running
    finally:
        running.stop()


@pytest.mark.slow
def test_damaged_state_files_are_named_kept_aside_and_defaults_used(
    damaged: RunningSystem,
) -> None:
    system, state = damaged, damaged.state_dir
    root = state.parent
    problems = " | ".join(system.get("/api/health").json()["problems"])
    # config.json: defaults (the app timeout is 60 s again), the damaged file aside
    assert "config.json" in problems, problems
    assert len(_aside(root, "config.json")) == 1
    assert "voice_ra" in _aside(root, "config.json")[0].read_text()
    # the preference file of --ports: named in the log, free ports used
    assert "preferred-ports.json" in system.log_tail()
    # jobs.json: named by the scheduler, aside, no job
    schedules = system.get("/api/schedules").json()
    assert any("jobs.json" in p for p in schedules["problems"]), schedules
    assert len(_aside(state, "jobs.json")) == 1 and schedules["jobs"] == []
    # a confirmation: listing works, the damaged question is named and aside
    assert system.get("/api/confirmations").json()["confirmations"] == []
    problems = " | ".join(system.get("/api/health").json()["problems"])
    assert f"{CONFIRMATION}.json" in problems, problems
    assert len(_aside(state / "confirmations", f"{CONFIRMATION}.json")) == 1
    # a session: the instruction works on a fresh session of that id
    reply = task_reply(system.say("回声 新的开始", session_id=SESSION))
    assert reply["status"] == "ok", reply
    assert len(_aside(state / "sessions", f"{SESSION}.json")) == 1
    problems = " | ".join(system.get("/api/health").json()["problems"])
    assert f"{SESSION}.json" in problems, problems
    saved = json.loads((state / "sessions" / f"{SESSION}.json").read_text().split("\n")[0])
    assert [t["text"] for t in saved["history"]] == ["回声 新的开始"]
    # permissions.json: named and aside at the start, nothing granted by it
    problems = " | ".join(system.get("/api/health").json()["problems"])
    assert "permissions.json" in problems, problems
    assert len(_aside(state, "permissions.json")) == 1
    # the live port map was rewritten by the launch and reads again
    assert StateDir(state).read_ports()["controller"] == int(system.url.rsplit(":", 1)[1])


def test_a_damaged_live_port_map_is_set_aside_by_its_reader(tmp_path: Path) -> None:
    state = StateDir(tmp_path)
    state.ports_file.write_text('{"controller": 4')
    assert state.read_ports() == {}
    assert len(_aside(tmp_path, "ports.json")) == 1 and not state.ports_file.exists()


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize(
    ("locale", "title"),
    [("zh-CN", "有保存的数据无法读取"), ("en-US", "Some saved data could not be read")],
)
def test_the_desktop_says_once_which_files_were_damaged(
    damaged: RunningSystem, browser: Any, locale: str, title: str
) -> None:
    with desktop_page(browser, damaged, [], locale=locale) as page:
        warning = page.locator(".toast-warning", has_text=title)
        warning.wait_for()
        assert warning.count() == 1
        warning.locator("summary").click()
        detail = warning.locator("pre").inner_text()
        assert "permissions.json" in detail and "corrupt-" in detail, detail
        page.reload()  # said once: not again on this desktop
        page.wait_for_selector("body[data-problems-checked]")
        assert page.locator(".toast-warning", has_text=title).count() == 0
