"""SECURITY.md A1–A3 for an app forked from the app template (`aios_sdk.zygote`).

A real template process (started by `controller.apps.forkserver.ForkServer`, as the
supervisor starts it) forks a probe app whose plan comes from a real `Confiner`,
exactly as the supervisor builds it. The probe's own code then tries what a hostile
app would: read the desktop's token, another app's workspace and code, `/root`,
`/home` and the repository; write outside its workspace; list processes and read
their environments; find its capabilities; mount over a mask. It writes what it
met into its own workspace, which is the one place it can write. Then: the template
never held the app's token (its memory is searched for it), and a `kill -9` of the
template takes every app forked from it along.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from aios_runtime.settings import AppSandboxSettings
from controller.apps.confinement import Confiner
from controller.apps.discovery import load_app
from controller.apps.forkserver import ForkedProcess, ForkServer
from tests.security.conftest import HAS_BWRAP, NEEDS_BWRAP

pytestmark = pytest.mark.process

REPO = Path(__file__).resolve().parents[2]

# the probe app's whole code: it runs as `__main__` in the forked, confined child
PROBE = """
import ctypes, json, os, time

plan = json.loads(os.environ["PROBE_PLAN"])
if plan.get("sleep"):
    time.sleep(plan["sleep"])


def attempt(action):
    try:
        return {"ok": True, "value": action()}
    except Exception as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


def read(path):
    if os.path.isdir(path):
        return sorted(os.listdir(path))
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read(200)


def write(folder):
    path = os.path.join(folder, "planted.txt")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("planted")
    return path


def environments():
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            with open(f"/proc/{name}/environ", "rb") as handle:
                found[name] = handle.read().decode("latin-1")
    return found


def capabilities():
    with open("/proc/self/status", encoding="ascii") as handle:
        rows = dict(line.split(":", 1) for line in handle if ":" in line)
    return {key: rows[key].strip() for key in ("CapEff", "CapPrm", "CapBnd", "NoNewPrivs")}


libc = ctypes.CDLL(None, use_errno=True)


def mount_over(target):
    if libc.mount(b"none", target.encode(), b"tmpfs", 0, None) != 0:
        raise OSError(ctypes.get_errno(), "mount refused")
    return "mounted"


result = {
    "reads": {name: attempt(lambda p=p: read(p)) for name, p in plan["reads"].items()},
    "writes": {name: attempt(lambda p=p: write(p)) for name, p in plan["writes"].items()},
    "own": attempt(lambda: write(os.environ["AIOS_WORKDIR"])),
    "pid": os.getpid(),
    "processes": sorted(int(n) for n in os.listdir("/proc") if n.isdigit()),
    "environments": attempt(environments),
    "capabilities": capabilities(),
    "mount": attempt(lambda: mount_over(plan["mask"])),
    "token_seen": os.environ.get("AIOS_TOKEN"),
}
with open(os.path.join(os.environ["AIOS_WORKDIR"], "result.json"), "w") as handle:
    json.dump(result, handle)
"""


@pytest.fixture
def forks(tmp_path: Path) -> Iterator[ForkServer]:
    if not HAS_BWRAP:
        pytest.skip(NEEDS_BWRAP)
    server = ForkServer(tmp_path / "template.log")
    server.start()
    try:
        if not server.wait_ready(60):
            pytest.fail(
                f"the template did not start: {(tmp_path / 'template.log').read_text()}"
            )
        if server.confines is not None:
            pytest.skip(f"a forked child cannot confine itself here: {server.confines}")
        yield server
    finally:
        server.stop()


@pytest.fixture
def layout(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """An installation: a state folder with a token and two apps' workspaces, an apps
    folder with the probe and another app, a user's home file and a root's file."""
    state, apps = tmp_path / "state", tmp_path / "apps"
    (state / "workspaces" / "other_app").mkdir(parents=True)
    (state / "token").write_text("the-desktop-token")
    (state / "workspaces" / "other_app" / "private.txt").write_text("other's data")
    for app_id, code in (("probe_app", PROBE), ("other_app", "print('other')\n")):
        folder = apps / app_id
        folder.mkdir(parents=True)
        (folder / "main.py").write_text(code)
        manifest = {"name": app_id, "entry": "main.py", "role_prompt": "a test app"}
        (folder / "manifest.json").write_text(json.dumps(manifest))
    tag = secrets.token_hex(6)
    home = Path("/home") / f"aios-forked-{tag}"
    root_file = Path("/root") / f".aios-forked-{tag}"
    home.mkdir()
    (home / "secret.txt").write_text("a user's file")
    root_file.write_text("root's file")
    try:
        yield {
            "state": state,
            "apps": apps,
            "config": tmp_path / "config.json",
            "reads": {
                "token": str(state / "token"),
                "other_workspace": str(state / "workspaces" / "other_app" / "private.txt"),
                "other_code": str(apps / "other_app" / "main.py"),
                "home": str(home / "secret.txt"),
                "root": str(root_file),
                "repository": str(REPO / "config.json"),
            },
            "writes": {
                "own_folder": str(apps / "probe_app"),
                "other_workspace": str(state / "workspaces" / "other_app"),
                "state": str(state),
                "home": str(home),
                "root": "/root",
                "usr": "/usr/local",
            },
        }
    finally:
        shutil.rmtree(home, ignore_errors=True)
        root_file.unlink(missing_ok=True)


def _fork_probe(
    forks: ForkServer, layout: dict[str, Any], token: str, **extra: Any
) -> tuple[ForkedProcess, Path]:
    confiner = Confiner(
        AppSandboxSettings(),
        state_dir=layout["state"],
        config_file=layout["config"],
        apps_dirs=[layout["apps"]],
    )
    spec = load_app(layout["apps"] / "probe_app", layout["state"] / "workspaces")
    assert spec.ok and spec.workdir is not None, spec.error
    how = confiner.decide(spec)
    assert how.confined, how.note
    probe_plan = {
        "reads": layout["reads"],
        "writes": layout["writes"],
        "mask": str(layout["state"]),
        **extra,
    }
    env = {
        "AIOS_TOKEN": token,
        "AIOS_WORKDIR": str(spec.workdir),
        "PROBE_PLAN": json.dumps(probe_plan),
    }
    log = layout["state"].parent / "probe.log"
    proc = forks.spawn(confiner.fork_plan(spec, how), env, log, append=False)
    return proc, spec.workdir


def _run_probe(forks: ForkServer, layout: dict[str, Any], token: str) -> dict[str, Any]:
    proc, workdir = _fork_probe(forks, layout, token)
    code = proc.wait(60)
    log = (layout["state"].parent / "probe.log").read_text()
    assert code == 0, log
    return json.loads((workdir / "result.json").read_text())


def test_a1_a_forked_app_reads_neither_the_token_nor_other_apps_nor_homes(
    forks: ForkServer, layout: dict[str, Any]
) -> None:
    for what, path in layout["reads"].items():
        assert Path(path).read_text(), what  # each file is there, seen from outside
    result = _run_probe(forks, layout, token="probe-token")
    for what, outcome in result["reads"].items():
        leaked = outcome["ok"] and outcome["value"] not in ("", [])
        assert not leaked, f"the forked app read {what}: {outcome}"
    assert result["token_seen"] == "probe-token"  # its own token, from its environment


def test_a2_a_forked_app_writes_only_its_own_workspace(
    forks: ForkServer, layout: dict[str, Any]
) -> None:
    result = _run_probe(forks, layout, token="probe-token")
    for what, folder in layout["writes"].items():
        assert not (Path(folder) / "planted.txt").exists(), f"a file planted in {what}"
        if not folder.startswith("/tmp/"):  # under /tmp it lands in its private /tmp
            assert not result["writes"][what]["ok"], f"the app wrote into {what}"
    own = result["own"]
    assert own["ok"], own
    assert Path(own["value"]).read_text() == "planted"
    assert Path(own["value"]).parent == layout["state"] / "workspaces" / "probe_app"
    assert not result["mount"]["ok"], result["mount"]  # no mount over a mask


def test_a3_a_forked_app_sees_no_other_process_and_holds_no_capability(
    forks: ForkServer, layout: dict[str, Any]
) -> None:
    result = _run_probe(forks, layout, token="probe-token")
    assert result["pid"] == 1 and result["processes"] == [1]
    assert result["environments"] == {"ok": True, "value": {}}
    caps = result["capabilities"]
    assert int(caps["CapEff"], 16) == 0 and int(caps["CapPrm"], 16) == 0, caps
    assert int(caps["CapBnd"], 16) == 0 and caps["NoNewPrivs"] == "1", caps


def _memory_holds(pid: int, needle: bytes) -> bool:
    """Whether `needle` is anywhere in the readable private memory of `pid`."""
    found = False
    with open(f"/proc/{pid}/maps", encoding="ascii") as maps:
        regions = [line.split() for line in maps]
    fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
    try:
        for region in regions:
            start, end = (int(x, 16) for x in region[0].split("-"))
            if not region[1].startswith("r") or end - start > 512 << 20:
                continue
            try:
                data = os.pread(fd, end - start, start)
            except OSError:
                continue
            if needle in data:
                found = True
                break
    finally:
        os.close(fd)
    return found


def test_the_template_never_holds_an_apps_token(
    forks: ForkServer, layout: dict[str, Any]
) -> None:
    """Every app is forked from the template's memory: a token it had read would be
    inherited by the next app. It passes the environment on without reading it."""
    token = "tok-" + secrets.token_urlsafe(24)
    result = _run_probe(forks, layout, token=token)
    assert result["token_seen"] == token
    assert forks.pid is not None
    assert _memory_holds(os.getpid(), token.encode())  # the search finds what is there
    assert not _memory_holds(forks.pid, token.encode())


def test_a_kill_9_of_the_template_leaves_no_forked_app_behind(
    forks: ForkServer, layout: dict[str, Any]
) -> None:
    proc, _ = _fork_probe(forks, layout, token="probe-token", sleep=120)
    assert psutil.Process(proc.pid).ppid() == forks.pid  # forked from the template
    assert forks.pid is not None
    os.kill(forks.pid, signal.SIGKILL)
    assert proc.wait(30) == -signal.SIGKILL  # reported ended
    deadline = time.monotonic() + 30
    gone = False
    while not gone and time.monotonic() < deadline:
        gone = not psutil.pid_exists(proc.pid) or (
            psutil.Process(proc.pid).status() == psutil.STATUS_ZOMBIE
        )
        time.sleep(0.05)
    assert gone, f"the app {proc.pid} outlived the template"
    assert not forks.usable  # apps are started anew from here on


def test_each_forked_app_has_a_pid_namespace_of_its_own(
    forks: ForkServer, layout: dict[str, Any]
) -> None:
    """Two apps forked one after the other: each is pid 1 of its own namespace, one
    level below the host's (the second is not born inside the first's)."""
    first, _ = _fork_probe(forks, layout, token="one", sleep=120)
    second, _ = _fork_probe(forks, layout, token="two", sleep=120)
    try:
        spaces = []
        for proc in (first, second):
            status = Path(f"/proc/{proc.pid}/status").read_text()
            nspid = next(
                line.split()[1:]
                for line in status.splitlines()
                if line.startswith("NSpid:")
            )
            assert nspid == [str(proc.pid), "1"], nspid
            spaces.append(os.readlink(f"/proc/{proc.pid}/ns/pid"))
            deadline = time.monotonic() + 30
            words: list[bytes] = []
            while time.monotonic() < deadline:  # until it runs the app's code
                words = Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")
                if words[1].endswith(b"main.py"):
                    break
                time.sleep(0.05)
            assert words[1].endswith(b"probe_app/main.py"), words  # as `python3 main.py`
            launch = [e for e in psutil.Process(proc.pid).environ() if e == "AIOS_LAUNCH"]
            assert launch == ["AIOS_LAUNCH"]  # the reaper's mark is kept
        assert spaces[0] != spaces[1]
        assert os.readlink(f"/proc/{forks.pid}/ns/pid") == os.readlink("/proc/self/ns/pid")
    finally:
        for proc in (first, second):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
