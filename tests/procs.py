"""Real processes on ephemeral ports, for the end-to-end tier of the test suite.

`spawn` starts a command in its own process group; `wait_healthy` polls a health
URL; `stop` kills the whole group so no test leaves a process behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import requests

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
# Debian's Chromium for Playwright: never `playwright install`
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


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
    """Start `args` in a new process group; output goes to `log` (or is discarded)."""
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
