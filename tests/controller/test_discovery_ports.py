"""App discovery (broken manifests, role, requirements) and port assignment."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from aios_protocol.errors import InvalidRequest
from controller.apps.discovery import check_requirements, discover_apps
from controller.apps.ports import PortAssigner, load_preferred_ports, port_is_free
from controller.state_dir import StateDir

ROOT = Path(__file__).resolve().parents[2]


def make_app(apps: Path, app_id: str, manifest: object, **files: str) -> Path:
    folder = apps / app_id
    folder.mkdir(parents=True)
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    (folder / "manifest.json").write_text(text, encoding="utf-8")
    for name, content in files.items():
        (folder / name.replace("__", ".")).write_text(content, encoding="utf-8")
    return folder


GOOD = {"name": "Good", "entry": "main.py", "role_prompt": "you are good"}


def test_shipped_apps_are_discovered() -> None:
    specs = {s.app_id: s for s in discover_apps(ROOT / "apps")}
    hello = specs["hello_app"]
    assert hello.ok, hello.error
    assert hello.role  # from role.md
    assert hello.workdir == (ROOT / "apps/hello_app/workspace").resolve()
    assert hello.entry == (ROOT / "apps/hello_app/main.py").resolve()


def test_broken_manifests_name_the_field_and_spare_the_others(tmp_path: Path) -> None:
    make_app(tmp_path, "good", GOOD, main__py="")
    make_app(tmp_path, "no_json", "{not json", main__py="")
    make_app(tmp_path, "no_name", {"entry": "main.py", "role_prompt": "r"}, main__py="")
    make_app(tmp_path, "no_entry_file", {**GOOD, "entry": "missing.py"})
    make_app(tmp_path, "bad_port", {**GOOD, "port": 70000}, main__py="")
    make_app(tmp_path, "no_role", {"name": "x", "entry": "main.py"}, main__py="")
    make_app(tmp_path, "escapes", {**GOOD, "workdir": "../../etc"}, main__py="")
    (tmp_path / "not_an_app").mkdir()  # no manifest: ignored
    specs = {s.app_id: s for s in discover_apps(tmp_path)}
    assert set(specs) == {
        "good",
        "no_json",
        "no_name",
        "no_entry_file",
        "bad_port",
        "no_role",
        "escapes",
    }
    assert specs["good"].ok
    assert "not valid JSON" in specs["no_json"].error
    assert "name" in specs["no_name"].error
    assert (
        "entry" in specs["no_entry_file"].error
        and "missing.py" in specs["no_entry_file"].error
    )
    assert "port" in specs["bad_port"].error
    assert "role_prompt" in specs["no_role"].error
    assert "workdir" in specs["escapes"].error
    assert not any(specs[k].ok for k in specs if k != "good")


def test_role_from_role_md_and_default_workspace(tmp_path: Path) -> None:
    make_app(
        tmp_path, "a", {"name": "A", "entry": "main.py"}, main__py="", role__md="角色\n"
    )
    spec = discover_apps(tmp_path)[0]
    assert spec.ok and spec.role == "角色"
    assert spec.workdir == (tmp_path / "a" / "workspace").resolve()
    assert spec.workdir.is_dir()


def test_unsatisfied_requirements_are_reported_with_the_fix(tmp_path: Path) -> None:
    folder = make_app(
        tmp_path,
        "a",
        GOOD,
        main__py="",
        requirements__txt="# comment\nflask\nno-such-package-xyz>=1\npydantic>=999\n",
    )
    note = check_requirements(folder)
    assert note is not None
    assert "no-such-package-xyz" in note and "pydantic>=999" in note
    assert "flask" not in note.split("—")[0]
    assert f"pip install -r {folder / 'requirements.txt'}" in note
    assert discover_apps(tmp_path)[0].requirements_note == note
    (folder / "requirements.txt").write_text("flask\n")
    assert check_requirements(folder) is None


def test_preferred_port_taken_falls_back_to_a_free_one() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        assert not port_is_free(taken)
        assigner = PortAssigner({"app": taken})
        port = assigner.assign("app")
        assert port != taken and port_is_free(port)
        assert assigner.displaced == {"app": taken}


def test_ports_are_distinct_and_auto_ignores_the_file(tmp_path: Path) -> None:
    ports_file = tmp_path / "ports.json"
    ports_file.write_text(json.dumps({"a": 5001, "b": {"port": 5002, "endpoint": "/h"}}))
    assert load_preferred_ports(ports_file) == {"a": 5001, "b": 5002}
    assert load_preferred_ports("auto") == {}
    assigner = PortAssigner()
    ports = assigner.assign_all([("x", None), ("y", None), ("z", None)])
    assert len(set(ports.values())) == 3
    ports_file.write_text('{"a": "high"}')
    with pytest.raises(InvalidRequest, match="a: port"):
        load_preferred_ports(ports_file)


def test_launch_files_token_is_private(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    state.write_launch({"controller": 1234}, "secret-token", pid=99999999)
    assert state.read_token() == "secret-token"
    assert state.token_file.stat().st_mode & 0o777 == 0o600
    assert state.read_ports() == {"controller": 1234}
    assert state.controller_url() == "http://127.0.0.1:1234"
    assert state.running_pid() is None  # no such process
    state.clear_launch(99999999)
    assert state.read_token() is None
