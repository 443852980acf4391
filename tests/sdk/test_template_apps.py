"""Apps as real processes, without an executor: the design's verbose Flask template
(S-76, run unmodified) and a folder made by `scaffold_app` (S-32)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import requests

from aios.scaffold import AppExists, scaffold_app
from aios_protocol.errors import InvalidRequest
from aios_protocol.messages import AppReply, Manifest
from tests.procs import PYTHON, free_port, spawn, stop, wait_healthy

TEMPLATE_APP = Path(__file__).resolve().parent / "template_app"


def _post_when_up(url: str, body: dict, proc, timeout: float = 20) -> requests.Response:
    """POST until the server accepts connections (the template has no /health)."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"app exited with {proc.returncode}")
        try:
            return requests.post(url, json=body, timeout=5)
        except requests.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@pytest.mark.process
def test_verbose_flask_template_runs_unmodified(tmp_path: Path) -> None:
    port = free_port()
    proc = spawn(
        [PYTHON, "main.py"],
        env={"APP_PORT": str(port)},
        cwd=TEMPLATE_APP,
        log=tmp_path / "template.log",
    )
    try:
        response = _post_when_up(
            f"http://127.0.0.1:{port}/handle",
            {
                "instruction": "刷新数据",
                "context": {"session_id": "sess_t", "available_tools": ["http_request"]},
                "action_request": None,
            },
            proc,
        )
        assert response.status_code == 200, (tmp_path / "template.log").read_text()
        reply = AppReply.model_validate(response.json())
        assert reply.status == "ok" and reply.view_type == "list"
        assert reply.data == {"items": []}
        assert reply.actions[0].action_id == "refresh"
        assert reply.steps[0].tool == "http_request" and reply.steps[0].step_id == 1
        assert reply.message == "已完成"
    finally:
        stop(proc)


def test_scaffold_refuses_bad_ids_and_existing_folders(tmp_path: Path) -> None:
    for bad in ["Notes", "1notes", "n", "notes-app", "notes app", "../x", "a" * 42]:
        with pytest.raises(InvalidRequest, match="app id"):
            scaffold_app(tmp_path, bad)
    with pytest.raises(InvalidRequest, match="name of a Python module"):
        scaffold_app(tmp_path, "json")  # the package would hide the standard library's
    with pytest.raises(InvalidRequest, match="app name"):
        scaffold_app(tmp_path, "notes", name="two\nlines")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine")
    with pytest.raises(AppExists):
        scaffold_app(tmp_path, "taken")
    assert (tmp_path / "taken" / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


@pytest.mark.process
def test_scaffolded_app_has_the_s32_layout_and_answers(tmp_path: Path) -> None:
    folder = scaffold_app(tmp_path / "apps", "my_notes", name="我的笔记")
    assert folder == tmp_path / "apps" / "my_notes"
    assert sorted(p.name for p in folder.iterdir()) == [
        "__init__.py",
        "agent.py",
        "flows.py",
        "main.py",
        "manifest.json",
        "requirements.txt",
        "role.md",
        "tests",
        "workspace",
    ]
    assert sorted(p.name for p in (folder / "tests").iterdir()) == [
        "__init__.py",
        "test_app.py",
    ]
    assert (folder / "workspace").is_dir()
    manifest = Manifest.model_validate(json.loads((folder / "manifest.json").read_text()))
    assert manifest.name == "我的笔记" and manifest.entry == "main.py"
    assert manifest.keywords and manifest.examples
    assert "我的笔记" in (folder / "role.md").read_text()
    agent = (folder / "agent.py").read_text()
    assert "class MyNotesAgent(AIOSAgent, flows=MyNotesFlows):" in agent
    assert 'name = "我的笔记"' in agent
    assert "class MyNotesFlows(Flows):" in (folder / "flows.py").read_text()
    assert "serve_package(__file__)" in (folder / "main.py").read_text()

    port = free_port()
    proc = spawn(
        [PYTHON, "main.py"],
        env={
            "APP_PORT": str(port),
            "AIOS_TOKEN": "scaffold-token",
            "AIOS_APP_ID": "my_notes",
        },
        cwd=folder,
        log=tmp_path / "app.log",
    )
    try:
        health = wait_healthy(f"http://127.0.0.1:{port}/health", proc)
        assert health == {"status": "ok", "app_id": "my_notes", "name": "我的笔记"}
        response = requests.post(
            f"http://127.0.0.1:{port}/handle",
            json={"instruction": "", "context": {}},
            headers={"X-AIOS-Token": "scaffold-token"},
            timeout=5,
        )
        reply = response.json()
        assert reply["status"] == "ok" and reply["view_type"] == "text"
        assert reply["actions"][0]["action_id"] == "list_files"
        assert reply["actions"][0]["label"] == "列出文件"
        english = requests.post(
            f"http://127.0.0.1:{port}/handle",
            json={"instruction": "", "context": {"language": "en-US"}},
            headers={"X-AIOS-Token": "scaffold-token"},
            timeout=5,
        ).json()  # the template writes each text in the user's language
        assert english["data"]["content"] == "This is 我的笔记."
        assert english["actions"][0]["label"] == "List files"
        planned = requests.post(
            f"http://127.0.0.1:{port}/handle",
            json={
                "instruction": None,
                "context": {},
                "action_request": {"action_id": "list_files"},
            },
            headers={"X-AIOS-Token": "scaffold-token"},
            timeout=5,
        ).json()
        assert planned["view_type"] == "loading"
        assert planned["steps"] == [
            {"step_id": 1, "tool": "file_list", "args": {"path": "workspace"}}
        ]
    finally:
        stop(proc)
