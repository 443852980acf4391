"""Apps installed and removed while the system runs: the folder watcher, `aios
install` / `aios uninstall`, the install API, and the bad inputs (a broken or
half-copied folder, a manifest rewritten while read, a taken port, a bad zip, the
same id twice) — each a clear message, with nothing else disturbed."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.apps_at_scale.conftest import echo_copy, lazy_config
from tests.controller.system import ROOT, RunningSystem, launch
from tests.procs import PYTHON, held_port

pytestmark = pytest.mark.slow

_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("hot_install")
    apps = root / "apps"
    apps.mkdir()
    shutil.copytree(ROOT / "apps" / "hello_app", apps / "hello_app", ignore=_IGNORE)
    running = launch(root, apps, config=lazy_config())
    try:
        yield running
    finally:
        running.stop()


def _outside(system: RunningSystem, app_id: str, **manifest: object) -> Path:
    """A ready app folder beside (not inside) the apps folder."""
    return echo_copy(system.apps_dir.parent / "incoming", app_id, **manifest)


def _manifest(app_id: str) -> dict:
    word = f"{app_id}专用词"
    return {"name": app_id, "keywords": [word], "examples": [], "description": app_id}


def _hello_still_answers(system: RunningSystem) -> None:
    answer = system.say("跟我打个招呼")
    assert answer["tasks"][0]["app_id"] == "hello_app", answer
    assert answer["tasks"][0]["status"] == "done", answer


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def test_a_copied_folder_is_on_the_desktop_within_2_s_and_answers(
    system: RunningSystem,
) -> None:
    source = _outside(system, "copied_app", **_manifest("copied_app"))
    started = time.monotonic()
    shutil.copytree(source, system.apps_dir / "copied_app")
    row = system.wait_for(lambda: system.apps().get("copied_app"), 5, "copied_app listed")
    took = time.monotonic() - started
    assert took <= 2.0, took
    assert row["status"] == "idle", row
    answer = system.say("copied_app专用词 你好")  # routable from its manifest at once
    task = answer["tasks"][0]
    assert task["app_id"] == "copied_app" and task["status"] == "done", answer
    # its events reached the desktop's stream: listed, then starting, then running
    events = system.get("/api/events?since=0&limit=400", stream=True, timeout=10)
    seen = []
    for line in events.iter_lines(decode_unicode=True):
        if line.startswith("data:"):
            event = json.loads(line[5:])
            if event["type"] == "app_status" and event.get("app_id") == "copied_app":
                seen.append(event["data"]["status"])
                if seen[-1] == "running":
                    break
    events.close()
    # (its first status may already be "starting": the instruction came at once)
    assert seen[0] in ("idle", "starting") and "starting" in seen, seen
    assert seen[-1] == "running", seen


def test_changed_code_restarts_a_running_app(system: RunningSystem) -> None:
    shutil.copytree(
        _outside(system, "changing_app", **_manifest("changing_app")),
        system.apps_dir / "changing_app",
    )
    system.wait_for(lambda: system.apps().get("changing_app"), 5, "changing_app listed")
    first = system.say("changing_app专用词 一")["tasks"][0]
    assert first["status"] == "done", first
    pid = system.apps()["changing_app"]["pid"]
    main = system.apps_dir / "changing_app" / "main.py"
    main.write_text(main.read_text().replace("echo: ", "echo v2: "))
    system.wait_for(
        lambda: (
            (r := system.apps()["changing_app"])["status"] == "running"
            and r.get("pid") not in (None, pid)
        ),
        10,
        "changing_app restarted",
    )
    assert not _alive(pid)
    second = system.say("changing_app专用词 二")["tasks"][0]
    assert second["result"]["data"]["content"].startswith("echo v2: "), second


def test_a_removed_folder_stops_the_app_and_leaves_the_desktop(
    system: RunningSystem,
) -> None:
    shutil.copytree(
        _outside(system, "leaving_app", **_manifest("leaving_app")),
        system.apps_dir / "leaving_app",
    )
    system.wait_for(lambda: system.apps().get("leaving_app"), 5, "leaving_app listed")
    assert system.say("leaving_app专用词")["tasks"][0]["status"] == "done"
    pid = system.apps()["leaving_app"]["pid"]
    started = time.monotonic()
    shutil.rmtree(system.apps_dir / "leaving_app")
    system.wait_for(lambda: "leaving_app" not in system.apps(), 5, "leaving_app gone")
    assert time.monotonic() - started <= 2.0
    system.wait_for(lambda: not _alive(pid), 10, "its process stopped")
    assert system.post("/api/apps/leaving_app/open", {}).status_code == 404
    assert (system.workspace("leaving_app")).is_dir()  # the workspace is kept
    _hello_still_answers(system)


def test_a_broken_manifest_is_shown_with_its_error_then_fixed(
    system: RunningSystem,
) -> None:
    source = _outside(system, "broken_app", **_manifest("broken_app"))
    good = (source / "manifest.json").read_text()
    (source / "manifest.json").write_text('{"name": "broken_app", "entry": ')
    shutil.copytree(source, system.apps_dir / "broken_app")
    row = system.wait_for(lambda: system.apps().get("broken_app"), 5, "broken_app listed")
    assert row["status"] == "failed" and "not valid JSON" in row["error"], row
    _hello_still_answers(system)
    (system.apps_dir / "broken_app" / "manifest.json").write_text(good)
    system.wait_app("broken_app", "idle", timeout=5)
    assert system.proc.poll() is None


def test_a_half_copied_folder_waits_for_its_entry(system: RunningSystem) -> None:
    source = _outside(system, "half_app", **_manifest("half_app"))
    target = system.apps_dir / "half_app"
    target.mkdir()
    shutil.copy(source / "manifest.json", target / "manifest.json")
    row = system.wait_for(lambda: system.apps().get("half_app"), 5, "half_app listed")
    assert row["status"] == "failed" and "entry: file 'main.py' not found" in row["error"]
    shutil.copy(source / "main.py", target / "main.py")
    row = system.wait_for(
        lambda: (
            "role_prompt" in ((r := system.apps()["half_app"]).get("error") or "") and r
        ),
        5,
        "half_app to miss its role only",
    )  # the rest of the copy: still failed, with the next thing missing
    shutil.copy(source / "role.md", target / "role.md")
    system.wait_app("half_app", "idle", timeout=5)
    assert system.say("half_app专用词")["tasks"][0]["status"] == "done"
    _hello_still_answers(system)


def test_a_manifest_rewritten_while_read_settles_on_its_last_version(
    system: RunningSystem,
) -> None:
    shutil.copytree(
        _outside(system, "flux_app", **_manifest("flux_app")), system.apps_dir / "flux_app"
    )
    system.wait_for(lambda: system.apps().get("flux_app"), 5, "flux_app listed")
    path = system.apps_dir / "flux_app" / "manifest.json"
    raw = json.loads(path.read_text())

    def rewrite() -> None:
        for i in range(60):
            text = json.dumps({**raw, "name": f"flux {i}"}, ensure_ascii=False)
            with open(path, "w", encoding="utf-8") as handle:  # not atomic, on purpose
                handle.write(text[: len(text) // 2])
                handle.flush()
                handle.write(text[len(text) // 2 :])
            time.sleep(0.01)

    writer = threading.Thread(target=rewrite)
    writer.start()
    writer.join()
    system.wait_for(
        lambda: (
            (r := system.apps().get("flux_app"))
            and r["name"] == "flux 59"
            and r["status"] == "idle"
        ),
        5,
        "flux_app on its last manifest",
    )
    assert system.proc.poll() is None
    _hello_still_answers(system)


def test_a_taken_manifest_port_falls_back_to_a_free_one(system: RunningSystem) -> None:
    with held_port() as port:
        source = _outside(system, "port2_app", port=port, **_manifest("port2_app"))
        shutil.copytree(source, system.apps_dir / "port2_app")
        system.wait_for(lambda: system.apps().get("port2_app"), 5, "port2_app listed")
        answer = system.say("port2_app专用词")["tasks"][0]
        assert answer["status"] == "done", answer
        row = system.apps()["port2_app"]
        assert row["status"] == "running" and row["port"] != port, row


def test_cli_install_and_uninstall_of_a_folder_and_a_zip(system: RunningSystem) -> None:
    def aios(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [PYTHON, "-m", "aios", *args, "--state-dir", str(system.state_dir)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )

    folder = _outside(system, "cli_app", **_manifest("cli_app"))
    done = aios("install", str(folder))
    assert done.returncode == 0 and "installed cli_app (idle)" in done.stdout, done
    assert system.apps()["cli_app"]["status"] == "idle"  # registered before it answered
    again = aios("install", str(folder))
    assert again.returncode == 1 and "already installed" in again.stderr, again

    zipped = _outside(system, "zip_src", **_manifest("zip_app"))
    archive = system.apps_dir.parent / "incoming" / "zip_app.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in zipped.rglob("*"):
            if path.is_file():
                out.write(path, f"zip_app/{path.relative_to(zipped).as_posix()}")
    done = aios("install", str(archive))
    assert done.returncode == 0, done
    assert system.say("zip_app专用词")["tasks"][0]["app_id"] == "zip_app"
    (system.workspace("zip_app") / "mine.txt").write_text("keep me")

    gone = aios("uninstall", "zip_app")
    assert gone.returncode == 0 and "workspace is kept in" in gone.stdout, gone
    assert "zip_app" not in system.apps()
    assert not (system.apps_dir / "zip_app").exists()
    kept = list(
        (system.state_dir / "users" / "default" / "workspaces" / ".removed").glob(
            "zip_app-*/mine.txt"
        )
    )
    assert [p.read_text() for p in kept] == ["keep me"]
    missing = aios("uninstall", "zip_app")
    assert missing.returncode == 1 and "no app" in missing.stderr, missing


def test_the_install_api_refuses_bad_zips_with_a_clear_message(
    system: RunningSystem,
) -> None:
    def zip_with(name: str, data: str) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as out:
            out.writestr(
                "evil_app/manifest.json", json.dumps({"name": "e", "entry": "main.py"})
            )
            out.writestr("evil_app/role.md", "x")
            out.writestr("evil_app/main.py", "print(1)\n")
            out.writestr(name, data)
        return buffer.getvalue()

    before = sorted(p.name for p in system.apps_dir.parent.iterdir())
    listed = set(system.apps())
    for name in ("../../escaped.txt", "/tmp/escaped.txt"):
        response = system.post(
            "/api/apps/install?name=evil.zip",
            None,
            data=zip_with(name, "owned"),
            headers={"Content-Type": "application/zip"},
        )
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["code"] == "install_refused" and "zip entry" in error["message"], error
    assert sorted(p.name for p in system.apps_dir.parent.iterdir()) == before
    assert not Path("/tmp/escaped.txt").exists()
    assert not [p for p in system.apps_dir.iterdir() if p.name.startswith(".")]
    duplicate = system.post(
        "/api/apps/install", {"path": str(system.apps_dir / "hello_app")}
    )
    assert (
        duplicate.status_code == 409 and duplicate.json()["error"]["code"] == "app_exists"
    )
    assert set(system.apps()) == listed
    _hello_still_answers(system)
