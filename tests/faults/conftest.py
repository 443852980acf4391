"""Fixtures of the fault suite: real Triton systems with the fault test app.

`build_fault_apps` assembles an apps folder (the shipped hello_app, the controller
tests' echo_app, renamed echo copies and `tests/faults/apps/fault_app`);
`start_fault_system` launches it with fast supervision and a short app timeout;
`tmpfs` mounts a small tmpfs (root only) so a test fills a real disk; `fill_disk`
writes a filler file until the disk says ENOSPC. `fault_system` is one shared
system for the tests that leave it as they found it.
"""

from __future__ import annotations

import copy
import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.controller.system import (
    TEST_CONFIG,
    RunningSystem,
    build_apps_dir,
    copy_echo,
    launch,
)

HERE = Path(__file__).resolve().parent
FAULT_APPS = HERE / "apps"
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")

FAULT_CONFIG: dict[str, Any] = {
    **copy.deepcopy(TEST_CONFIG),
    "app_timeout": 3,
    # the fault app's slow plan is `sleep 5`
    "tool_sandbox": {
        **TEST_CONFIG["tool_sandbox"],
        "shell_whitelist": ["ls", "cat", "echo", "python3", "sleep"],
    },
    "supervisor": {**TEST_CONFIG["supervisor"], "log_max_bytes": 256 * 1024},
}


def build_fault_apps(apps: Path, echo_copies: tuple[str, ...] = ()) -> Path:
    build_apps_dir(apps, test_apps=("echo_app",))
    shutil.copytree(FAULT_APPS / "fault_app", apps / "fault_app", ignore=_IGNORE)
    for app_id in echo_copies:
        copy_echo(apps, app_id, app_id.replace("_", ""))
    return apps


def start_fault_system(
    root: Path, *, config: dict[str, Any] | None = None, **kw: Any
) -> RunningSystem:
    apps = build_fault_apps(root / "apps", kw.pop("echo_copies", ()))
    running = launch(root, apps, config=config or copy.deepcopy(FAULT_CONFIG), **kw)
    try:
        for app_id in ("hello_app", "echo_app", "fault_app"):
            running.wait_app(app_id, "running")
    except BaseException:
        running.stop()
        raise
    return running


@pytest.fixture(scope="module")
def fault_system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    running = start_fault_system(tmp_path_factory.mktemp("faults"))
    try:
        yield running
    finally:
        running.stop()


def executor_process(system: RunningSystem) -> psutil.Process:
    for proc in system.children():
        try:
            if "executor" in proc.cmdline()[1:3]:
                return proc
        except psutil.Error:
            continue
    raise AssertionError(f"no executor below the controller; log: {system.log_tail()}")


def task_reply(response: dict[str, Any]) -> dict[str, Any]:
    """The reply of the one task of an instruction response."""
    tasks = response["tasks"]
    assert len(tasks) == 1, response
    return tasks[0]["result"]


@contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` at `path` (skips when mounting is not allowed here)."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=700", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill_disk(folder: Path) -> Path:
    """Write `folder/filler` until the disk is full; its path (delete it to free)."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as handle:
        for size in (65536, 4096, 512, 1):  # down to the last byte: nothing fits after
            try:
                while handle.write(b"\0" * size):
                    pass
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
    return filler
