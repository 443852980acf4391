"""A user's workspaces live in the state folder, not in the apps.

`discover_apps(apps, workspaces)` gives each app `<workspaces>/<app_id>/` as its
workdir, a copy of the shipped `workspace/` made on first use and never again (the
user's files are never overwritten); the app folder is left as shipped. A real
system started with `--state-dir` writes the code app's snippet there.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from controller.apps.discovery import discover_apps
from tests.controller.system import copy_shipped_apps, launch
from tests.procs import ROOT


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_shipped_files_are_copied_once_and_never_over_the_users(tmp_path: Path) -> None:
    apps = copy_shipped_apps(tmp_path / "apps", ("hello_app", "music_app"))
    shipped = _tree(apps)
    workspaces = tmp_path / "state" / "workspaces"
    specs = {s.app_id: s for s in discover_apps(apps, workspaces)}
    hello = specs["hello_app"].workdir
    assert hello == (workspaces / "hello_app").resolve()
    assert (hello / "greeting.txt").read_text("utf-8").strip() == "你好"
    assert specs["music_app"].workdir == (workspaces / "music_app").resolve()
    (hello / "greeting.txt").write_text("嗨", encoding="utf-8")  # the user's edit
    (hello / "mine.txt").write_text("x", encoding="utf-8")
    discover_apps(apps, workspaces)  # the next start
    assert (hello / "greeting.txt").read_text("utf-8") == "嗨"
    assert (hello / "mine.txt").exists()
    assert _tree(apps) == shipped  # the apps folder is as shipped
    assert not list(workspaces.glob(".*"))  # no half-made copy left


def test_an_app_without_a_shipped_workspace_gets_an_empty_one(tmp_path: Path) -> None:
    apps = copy_shipped_apps(tmp_path / "apps", ("code_app",))
    shutil.rmtree(apps / "code_app" / "workspace", ignore_errors=True)
    (spec,) = discover_apps(apps, tmp_path / "ws")
    assert spec.ok and spec.workdir.is_dir() and not any(spec.workdir.iterdir())
    assert not (apps / "code_app" / "workspace").exists()  # not created in the app


@pytest.mark.slow
def test_a_checkout_run_leaves_the_source_tree_clean(tmp_path: Path) -> None:
    """The shipped apps folder itself, with --state-dir: the snippet lands in the state."""
    before = _git_status()
    system = launch(tmp_path, ROOT / "apps", state_dir=tmp_path / "state")
    try:
        system.wait_app("code_app", "running")
        answer = system.say("执行代码 x=5; print(x*2)")
        (task,) = answer["tasks"]
        assert task["app_id"] == "code_app", answer
        assert task["result"]["data"]["stdout"] == "10\n", task["result"]
        snippet = system.workspace("code_app") / "snippet.py"
        assert snippet.read_text("utf-8") == "x=5; print(x*2)\n"
    finally:
        system.stop()
    assert _git_status() == before  # nothing new or changed under apps/


def _git_status() -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--", "apps"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
