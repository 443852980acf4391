"""Real processes on ephemeral ports, for the end-to-end tier of the test suite.

`spawn` starts a command in its own process group; `wait_healthy` polls a health
URL; `stop` kills the whole group so no test leaves a process behind.

A test that starts a process of ours says so with a marker (pyproject.toml lists
them), so `make test-fast` can leave it out: `may_start` fails a test that starts
what its markers do not allow, and `what_starts` tells which marker a command needs
(tests/conftest.py routes every `subprocess.Popen` through both).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest
import requests

from bench.browser import HEADLESS_CHROMIUM

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
# the tests drive Chromium's headless build, the bench the full one (bench/browser.py)
CHROMIUM = HEADLESS_CHROMIUM


# what a test starts → the markers that allow it (the first one is the one to add)
NEEDED_MARKERS = {
    "system": ("slow",),
    "process": ("process", "slow"),
    "browser": ("browser",),
}
OUR_PACKAGES = frozenset(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file())
_IMPORTED = re.compile(r"\b(?:import|from)\s+([\w., ]+)")
_PYTHON = re.compile(r"python[\d.]*")


@dataclass
class _RunningTest:
    nodeid: str
    markers: frozenset[str]
    refused: list[str] = field(default_factory=list)


_running: _RunningTest | None = None


@contextlib.contextmanager
def running_test(nodeid: str, markers: Iterable[str]) -> Iterator[list[str]]:
    """While the block runs, `may_start` checks starts against `markers`; yields the
    list of starts it refused (a refusal swallowed by an `except` is still there)."""
    global _running
    previous, _running = _running, _RunningTest(nodeid, frozenset(markers))
    try:
        yield _running.refused
    finally:
        _running = previous


def may_start(kind: str, what: str) -> None:
    """Fail the running test unless one of its markers allows it to start a `kind`
    ("system", "process" or "browser"); outside a test everything may start."""
    test = _running
    if test is None:
        return
    allowed = NEEDED_MARKERS[kind]
    if test.markers.isdisjoint(allowed):
        message = f"{test.nodeid} {what}: mark it @pytest.mark.{allowed[0]}"
        test.refused.append(message)
        pytest.fail(message, pytrace=False)


def _imports_ours(code: str) -> bool:
    for names in _IMPORTED.findall(code):
        for name in names.split(","):
            words = name.split()
            if words and words[0].split(".")[0] in OUR_PACKAGES:
                return True
    return False


def what_starts(
    args: Any, cwd: str | os.PathLike[str] | None = None
) -> tuple[str, str] | None:
    """What `subprocess.Popen(args, cwd=cwd)` starts, as (kind, words), when it is code
    of this repository or a browser; None for any other program (a tool's command in
    the sandbox, a skill's `--help`, sox, a generated script).

    Ours is `python -m <a package of this repository>`, a `.py` file of the
    repository or any app's `main.py`, `python -c` code importing our packages, and
    the `aios` command; its `start` subcommand is the whole system.
    """
    if isinstance(args, str):
        try:
            argv = shlex.split(args)
        except ValueError:
            argv = [args]
    elif isinstance(args, (bytes, os.PathLike)):
        argv = [os.fsdecode(args)]
    else:
        argv = [os.fsdecode(arg) for arg in args]
    if not argv:
        return None
    program = Path(argv[0])
    if "playwright" in program.parts or program.name.startswith("chromium"):
        return "browser", "drives Chromium"
    if program.name == "aios":
        return _command_of_ours("aios", argv[1:])
    if not _PYTHON.fullmatch(program.name):
        return None
    rest = argv[1:]
    while rest and rest[0].startswith("-") and rest[0] not in ("-m", "-c"):
        rest = rest[2:] if rest[0] in ("-X", "-W") else rest[1:]
    if rest[:1] == ["-c"]:
        if len(rest) > 1 and _imports_ours(rest[1]):
            return "process", "runs code of ours in `python -c`"
        return None
    if rest[:1] == ["-m"]:
        if len(rest) > 1 and rest[1].split(".")[0] in OUR_PACKAGES:
            return _command_of_ours(f"python -m {rest[1]}", rest[2:])
        return None
    if rest:
        script = Path(cwd or os.getcwd(), rest[0]).resolve()
        if script.name == "main.py" or script.is_relative_to(ROOT):
            return "process", f"starts python {rest[0]}"
    return None


def _command_of_ours(command: str, rest: list[str]) -> tuple[str, str]:
    if rest[:1] == ["start"]:
        return "system", f"starts the whole system ({command} start)"
    return "process", f"starts {' '.join([command, *rest[:1]])}"


def wait_for(
    check: Callable[[], Any], timeout: float = 10.0, what: str = "", every: float = 0.05
) -> Any:
    """Poll `check` until it returns something truthy (that value is returned); an
    `AssertionError` naming `what` when `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(every)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def spawn(
    args: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    log: str | os.PathLike[str] | None = None,
) -> subprocess.Popen:
    """Start `args` in a new process group; output goes to `log` (or is discarded).
    Only a test marked `process` (or `slow`) may call it."""
    may_start("process", "starts a process of its own (tests.procs.spawn)")
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    full_env.update(env or {})
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    return subprocess.Popen(
        args,
        env=full_env,
        cwd=cwd,
        stdout=out,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )


def wait_healthy(
    url: str, proc: subprocess.Popen | None = None, timeout: float = 20
) -> dict:
    """Poll `url` until it answers 200; fail early if `proc` exits."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(
                f"process exited with {proc.returncode} before {url} was healthy"
            )
        try:
            response = requests.get(url, timeout=1)
            if response.status_code == 200:
                return response.json()
        except requests.RequestException as exc:
            last = exc
        time.sleep(0.05)
    raise TimeoutError(f"{url} not healthy after {timeout}s: {last}")


def stop(proc: subprocess.Popen, grace: float = 3) -> None:
    """SIGTERM the process group, then SIGKILL it after `grace` seconds."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(5)


def start_executor(
    tmp_path: Path, *, config: dict | None = None, token: str = "test-master-token"
) -> tuple[subprocess.Popen, str, str]:
    """Spawn `python -m executor` on a free port with a temp config/state dir; return (proc, url, token) once /health answers.

    Files live under `tmp_path / "executor"`: `config.json`, `state/` (tool-call logs in
    `state/tool_calls/`) and `executor.log` (its output). Stop it with `stop(proc)`;
    register an app with `PUT {url}/apps/<id>` and an `AppRegistration` body.
    """
    import json

    home = Path(tmp_path) / "executor"
    home.mkdir(parents=True, exist_ok=True)
    config_path = home / "config.json"
    config_path.write_text(json.dumps(config or {}), encoding="utf-8")
    port = free_port()
    proc = spawn(
        [
            PYTHON,
            "-m",
            "executor",
            "--port",
            str(port),
            "--config",
            str(config_path),
            "--state-dir",
            str(home / "state"),
        ],
        env={"AIOS_TOKEN": token},
        cwd=ROOT,
        log=home / "executor.log",
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(f"{url}/health", proc)
    except BaseException:
        stop(proc)
        raise
    return proc, url, token


def processes_tagged(tag: str) -> list[psutil.Process]:
    """Live (non-zombie) processes whose argv holds `tag` as one argument."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if (
                tag in (proc.info["cmdline"] or [])
                and proc.info["status"] != psutil.STATUS_ZOMBIE
            ):
                found.append(proc)
        except psutil.Error:
            continue
    return found


@contextlib.contextmanager
def held_port() -> Iterator[int]:
    """A loopback port some other program is listening on while the block runs."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def pid_seen_by_itself(pid: int) -> int:
    """`pid` as that process sees itself (`os.getpid()` inside it): the number in its
    innermost PID namespace, which differs when the app runs in bubblewrap."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("NSpid:"):
            return int(line.split()[-1])
    return pid
