"""shell_exec / process_start through the service: policy, environment, limits, timeouts,
background processes, and the bubblewrap sandbox (SECURITY.md X2–X6, D1)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from tests.executor.conftest import HAS_BWRAP, MASTER, OTHER_TOKEN, Harness
from tests.procs import processes_tagged

NO_BWRAP = (
    "bubblewrap (bwrap) not installed: the process sandbox falls back to rlimits only"
)
SANDBOXES = [
    pytest.param(True, id="bubblewrap"),
    pytest.param(False, id="rlimit"),
]

SPAWNER = """\
import os, sys, time
tag = sys.argv[1]
def sleeper():
    os.execv(sys.executable, [sys.executable, "sleeper.py", tag])
if os.fork() == 0:          # a child with a grandchild
    if os.fork() == 0:
        sleeper()
    sleeper()
pid = os.fork()
if pid == 0:                # a double-forked daemon in its own session
    os.setsid()
    if os.fork() == 0:
        sleeper()
    os._exit(0)
os.waitpid(pid, 0)
print("spawned", flush=True)
time.sleep(3600)
"""
SLEEPER = "import sys, time\ntime.sleep(3600)\n"


def alive_with(tag: str) -> list[int]:
    return [proc.pid for proc in processes_tagged(tag)]


def wait_none_alive(tag: str, within: float = 5.0) -> list[int]:
    deadline = time.monotonic() + within
    while (left := alive_with(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def harness_for(make_harness, bwrap: bool, **config) -> Harness:
    if bwrap and not HAS_BWRAP:
        pytest.skip(NO_BWRAP)
    harness = make_harness({"tool_sandbox": {"use_bubblewrap": bwrap}, **config})
    expected = "bubblewrap" if bwrap else "rlimit"
    assert harness.client.get("/health").get_json()["sandbox"] == expected
    return harness


def write_spawner(workdir: Path) -> None:
    (workdir / "spawner.py").write_text(SPAWNER)
    (workdir / "sleeper.py").write_text(SLEEPER)


@pytest.mark.parametrize("bwrap", SANDBOXES)
def test_x6_timeout_kills_child_grandchild_and_double_forked_daemon(
    make_harness, bwrap: bool
) -> None:
    """X6: a command that double-forks and times out → no descendant survives."""
    harness = harness_for(make_harness, bwrap)
    write_spawner(harness.workdir)
    tag = f"x6-timeout-{bwrap}-{time.monotonic_ns()}"
    result = harness.call("shell_exec", cmd=["python3", "spawner.py", tag], timeout=1.5)
    assert result["status"] == "error" and result["code"] == "tool_timeout"
    assert result["result"]["stdout"] == "spawned\n"  # the partial output is kept
    assert wait_none_alive(tag) == []


@pytest.mark.parametrize("bwrap", SANDBOXES)
def test_x6_background_process_stop_kills_every_descendant(
    make_harness, bwrap: bool
) -> None:
    """X6: a background process that double-forks, then is stopped → nothing survives."""
    harness = harness_for(make_harness, bwrap)
    write_spawner(harness.workdir)
    tag = f"x6-bg-{bwrap}-{time.monotonic_ns()}"
    started = harness.call(
        "process_start", cmd="python3", args=["spawner.py", tag], background=True
    )
    assert started["status"] == "ok", started
    pid = started["result"]["pid"]
    assert started["result"]["log"].startswith("workspace/.logs/")
    log_file = harness.workdir / started["result"]["log"].removeprefix("workspace/")
    deadline = time.monotonic() + 10
    while "spawned" not in log_file.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(alive_with(tag)) >= 4
    listed = harness.client.get(
        "/processes", headers={"X-AIOS-Token": "app1-token-0123456789abcdef"}
    )
    assert [p["pid"] for p in listed.get_json()["processes"]] == [pid]
    # another app can neither see nor stop it
    other = {"X-AIOS-Token": OTHER_TOKEN}
    assert harness.client.get("/processes", headers=other).get_json()["processes"] == []
    assert harness.client.delete(f"/processes/{pid}", headers=other).status_code == 404
    stopped = harness.client.delete(
        f"/processes/{pid}", headers={"X-AIOS-Token": "app1-token-0123456789abcdef"}
    )
    assert stopped.status_code == 200
    assert wait_none_alive(tag) == []


def test_unregistering_an_app_stops_its_background_processes(make_harness) -> None:
    harness = harness_for(make_harness, HAS_BWRAP)
    write_spawner(harness.workdir)
    tag = f"unreg-{time.monotonic_ns()}"
    harness.call("process_start", cmd=["python3", "spawner.py", tag], background=True)
    deadline = time.monotonic() + 10
    while len(alive_with(tag)) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    response = harness.client.delete("/apps/app1", headers={"X-AIOS-Token": MASTER})
    assert response.get_json()["stopped_processes"] == 1
    assert wait_none_alive(tag) == []


def test_background_process_limit_and_exit_status(make_harness) -> None:
    harness = make_harness({"limits": {"max_processes": 1}})
    (harness.workdir / "quick.py").write_text("print('bye')\n")
    write_spawner(harness.workdir)
    tag = f"limit-{time.monotonic_ns()}"
    assert (
        harness.call("process_start", cmd=["python3", "spawner.py", tag], background=True)[
            "status"
        ]
        == "ok"
    )
    second = harness.call("process_start", cmd=["python3", "quick.py"], background=True)
    assert second["code"] == "too_many_processes"
    harness.app.extensions["aios_toolbox"].processes.stop_all()
    quick = harness.call("process_start", cmd=["python3", "quick.py"], background=True)[
        "result"
    ]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        listed = harness.client.get(
            "/processes?app_id=app1", headers={"X-AIOS-Token": MASTER}
        ).get_json()
        entry = next(p for p in listed["processes"] if p["pid"] == quick["pid"])
        if not entry["running"]:
            break
        time.sleep(0.05)
    assert entry["running"] is False and entry["returncode"] == 0
    assert "bye" in (harness.workdir / quick["log"].removeprefix("workspace/")).read_text()


def test_shell_exec_success_nonzero_exit_and_cwd(harness: Harness) -> None:
    (harness.workdir / "sub").mkdir()
    (harness.workdir / "sub" / "f.txt").write_text("inside")
    ok = harness.call("shell_exec", cmd="cat f.txt", cwd="workspace/sub")
    assert ok["result"] == {
        "returncode": 0,
        "stdout": "inside",
        "stderr": "",
        "truncated": False,
        "stdout_size": 6,
        "stderr_size": 0,
    }
    failing = harness.call("shell_exec", cmd=["ls", "no-such-file"])
    assert failing["status"] == "ok"  # a non-zero exit is data
    assert failing["result"]["returncode"] != 0 and failing["result"]["stderr"]
    assert (
        harness.call("shell_exec", cmd="ls", cwd="../app2")["code"]
        == "path_outside_workdir"
    )
    assert harness.call("shell_exec", cmd="rm -rf sub")["code"] == "command_not_allowed"
    assert (harness.workdir / "sub" / "f.txt").exists()


def test_x3_reading_outside_files_is_refused(harness: Harness) -> None:
    """X3: `cat /etc/passwd`, `cat ../other_app/secret` → refused."""
    for cmd in (
        ["cat", "/etc/passwd"],
        ["cat", "../app2/secret.txt"],
        "cat ../../apps/app2/secret.txt",
    ):
        result = harness.call("shell_exec", cmd=cmd)
        assert result["status"] == "error" and result["code"] == "path_outside_workdir", cmd


def test_x4_shell_syntax_is_printed_literally_never_run(harness: Harness) -> None:
    """X4: `["echo", "$(id); rm -rf ~"]` prints literally; string operators are refused."""
    (harness.workdir / "keep.txt").write_text("k")
    literal = harness.call("shell_exec", cmd=["echo", "$(id); rm -rf ~"])
    assert literal["result"]["stdout"] == "$(id); rm -rf ~\n"
    for cmd in ("echo hi; rm -rf ~", "echo `id`", "ls && cat keep.txt", "ls | cat"):
        assert harness.call("shell_exec", cmd=cmd)["code"] == "command_not_allowed"
    assert (harness.workdir / "keep.txt").exists()


def test_x5_workspace_binary_never_runs_and_environment_is_clean(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """X5: a workspace `ls` never runs; the tool's environment holds no API keys or tokens."""
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-should-never-leak")
    monkeypatch.setenv("AIOS_TOKEN", "token-should-never-leak")
    fake = harness.workdir / "ls"
    fake.write_text("#!/bin/sh\necho PWNED\n")
    fake.chmod(0o755)
    listing = harness.call("shell_exec", cmd=["ls"])
    assert (
        "PWNED" not in listing["result"]["stdout"] and "ls" in listing["result"]["stdout"]
    )
    (harness.workdir / "env.py").write_text(
        "import json, os\nprint(json.dumps(dict(os.environ)))\n"
    )
    env = __import__("json").loads(
        harness.call("shell_exec", cmd="python3 env.py")["result"]["stdout"]
    )
    assert env["PATH"] == "/usr/local/bin:/usr/bin:/bin"
    assert env["HOME"] == str(harness.workdir) and env["LANG"] == "C.UTF-8"
    assert "DEEPSEEK_API_KEY" not in env and "AIOS_TOKEN" not in env
    assert not any("leak" in value for value in env.values())


def test_x1_inline_code_is_refused(harness: Harness) -> None:
    """X1: `python3 -c "…network…"` is refused."""
    result = harness.call(
        "shell_exec",
        cmd=["python3", "-c", "import socket; socket.create_connection(('1.1.1.1', 80))"],
    )
    assert result["code"] == "command_not_allowed"


def test_d1_output_is_capped_and_sleep_is_killed(make_harness) -> None:
    """D1: huge output is cut at the cap (the rest drained); a sleeper dies at its timeout."""
    harness = make_harness({"limits": {"output_bytes": 1000}})
    (harness.workdir / "flood.py").write_text(
        "import sys\nfor _ in range(200):\n    sys.stdout.write('x' * 65536)\nsys.stderr.write('done')\n"
    )
    flood = harness.call("shell_exec", cmd="python3 flood.py")["result"]
    assert flood["truncated"] is True and len(flood["stdout"]) == 1000
    assert flood["stdout_size"] == 200 * 65536  # every byte written, kept or not
    assert flood["stderr"] == "done" and flood["returncode"] == 0
    assert flood["stderr_size"] == 4
    (harness.workdir / "nap.py").write_text("import time\ntime.sleep(3600)\n")
    napping = harness.call("shell_exec", cmd="python3 nap.py", timeout=0.5)
    assert napping["code"] == "tool_timeout"


def test_timeout_argument_never_raises_the_configured_one(make_harness) -> None:
    harness = make_harness({"tool_timeout": {"shell_exec": 0.5}})
    (harness.workdir / "nap.py").write_text("import time\ntime.sleep(3600)\n")
    result = harness.call("shell_exec", cmd="python3 nap.py", timeout=600)
    assert result["code"] == "tool_timeout" and "0.5" in result["error"]


def test_d1_memory_hog_is_stopped_by_rlimit(make_harness) -> None:
    """D1: a memory hog hits RLIMIT_AS (MemoryError), the executor is unaffected."""
    harness = harness_for(make_harness, False, limits={"memory_bytes": 300 << 20})
    (harness.workdir / "hog.py").write_text("x = bytearray(1 << 30)\nprint('allocated')\n")
    result = harness.call("shell_exec", cmd="python3 hog.py")["result"]
    assert result["returncode"] != 0 and "MemoryError" in result["stderr"]
    assert "allocated" not in result["stdout"]


def test_bubblewrap_hides_secrets_blocks_network_and_writes_only_the_workdir(
    make_harness,
) -> None:
    """X2 (with bubblewrap): home, state dir and other apps' workdirs are hidden, the
    network is cut, and writes outside the workdir never reach the real files."""
    harness = harness_for(make_harness, True)
    state_secret = harness.state_dir / "secret-state.txt"
    state_secret.write_text("state")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    probe = f"""\
import os, socket
def can_read(path):
    try:
        open(path).read(); return True
    except OSError:
        return False
def can_write(path):
    try:
        with open(path, "a") as f: f.write("pwned")
        return True
    except OSError:
        return False
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2); net = "open"
except OSError:
    net = "blocked"
print(net)
print(can_read({str(state_secret)!r}), can_read({str(harness.other_workdir / "secret.txt")!r}))
print(os.listdir("/root"))
print(can_write({str(state_secret)!r}), can_write("/usr/pwned"))
print(can_write("mine.txt"))
"""
    (harness.workdir / "probe.py").write_text(probe)
    try:
        result = harness.call("shell_exec", cmd="python3 probe.py")
    finally:
        listener.close()
    lines = result["result"]["stdout"].splitlines()
    assert lines[0] == "blocked"
    assert lines[1] == "False False"
    assert lines[2] == "[]"
    assert lines[3].split()[1] == "False"
    assert lines[4] == "True"
    assert state_secret.read_text() == "state"  # a write into the tmpfs mask never lands
    assert not Path("/usr/pwned").exists()
    assert (harness.workdir / "mine.txt").read_text() == "pwned"
