"""No space left on device while the controller saves its state.

A real system runs with its state folder and config.json on a small tmpfs; the test
fills that disk with a filler file (a real ENOSPC, not an injected one), then saves a
session journal, a confirmation, the settings and a scheduler job. Each answer is an
error naming the file (`storage_full`, HTTP 507), not a crash and not a success; the
file on disk keeps its last good version and no temporary file is left. Once the
filler is deleted, saving resumes: what was kept in memory meanwhile is written too.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from controller.sessions import load_session_file
from tests.controller.system import RunningSystem
from tests.faults.conftest import FAULT_CONFIG, fill_disk, start_fault_system, tmpfs

pytestmark = pytest.mark.slow

JOB = {
    "name": "磁盘满测试",
    "execution_type": "command",
    "schedule_type": "interval",
    "interval_s": 3600,
    "app_id": "echo_app",
    "command": ["echo", "hi"],
}


@pytest.fixture(scope="module")
def full_disk_system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("disk_full")
    with tmpfs(root / "disk", "48m") as disk:
        (root / "config.json").symlink_to(disk / "config.json")
        config = copy.deepcopy(FAULT_CONFIG)
        running = start_fault_system(root, config=config, state_dir=disk / "state")
        try:
            yield running
        finally:
            running.stop()


def _put(system: RunningSystem, path: str, body: object) -> requests.Response:
    return requests.put(system.url + path, json=body, headers=system.headers, timeout=30)


def _storage_full(response, file_name: str) -> None:
    assert response.status_code == 507, response.text
    error = response.json()["error"]
    assert error["code"] == "storage_full", error
    assert file_name in error["message"], error


def _leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.name.endswith((".tmp", ".new"))]


def test_a_full_disk_is_an_error_the_last_state_is_kept_and_saving_resumes(
    full_disk_system: RunningSystem,
) -> None:
    system = full_disk_system
    disk = system.state_dir.parent
    sid = system.say("回声 第一句")["session_id"]
    session_file = system.state_dir / "sessions" / f"{sid}.json"
    config_before = (disk / "config.json").read_bytes()
    assert system.post("/api/schedules", {**JOB, "name": "满之前"}).status_code == 201
    jobs_before = (system.state_dir / "jobs.json").read_bytes()

    filler = fill_disk(disk)
    try:
        # a session journal: a delta that still fits the file's last page is saved
        # (and answered 200); the first save that needs a new block is refused
        answered = ["回声 第一句"]
        for number in range(80):
            text = f"回声 第{number}次"
            response = system.post("/api/instruction", {"text": text, "session_id": sid})
            if response.status_code != 200:
                break
            answered.append(text)
        _storage_full(response, session_file.name)
        kept = load_session_file(session_file)
        assert [t["text"] for t in kept["history"]] == answered
        # a confirmation (the risky plan is not run, nothing is left pending)
        risky = system.post("/api/instruction", {"text": "故障应用 启动进程"})
        assert risky.status_code == 507, risky.text
        assert system.get("/api/confirmations").json()["confirmations"] == []
        # the settings
        _storage_full(_put(system, "/api/settings", {"voice_rate": 1.3}), "settings.json")
        assert (disk / "config.json").read_bytes() == config_before
        assert not (system.state_dir / "settings.json").exists()
        # the scheduler's files
        _storage_full(system.post("/api/schedules", {**JOB, "name": "满之时"}), "jobs.json")
        assert (system.state_dir / "jobs.json").read_bytes() == jobs_before
        assert _leftovers(disk) == []
        # the system itself is still up
        assert system.get("/api/health").status_code == 200
    finally:
        filler.unlink()

    third = system.say("回声 第三句", session_id=sid)
    assert third["session_id"] == sid
    saved = load_session_file(session_file)
    texts = [t["text"] for t in saved["history"]]
    assert texts[0] == "回声 第一句" and texts[-1] == "回声 第三句", texts
    assert text in texts  # refused while the disk was full, kept in memory
    assert _put(system, "/api/settings", {"voice_rate": 1.3}).status_code == 200
    saved = json.loads((system.state_dir / "settings.json").read_text())
    assert saved == {"voice_rate": 1.3}
    assert (disk / "config.json").read_bytes() == config_before  # never rewritten
    assert system.post("/api/schedules", {**JOB, "name": "满之后"}).status_code == 201
    names = [j["name"] for j in system.get("/api/schedules").json()["jobs"]]
    assert "满之前" in names and "满之后" in names and "满之时" not in names
    apps = system.apps()
    assert all(apps[a]["status"] == "running" for a in ("hello_app", "echo_app")), apps
    assert not os.path.exists(filler)
