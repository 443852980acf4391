"""SECURITY.md A1–A5: the app process itself is confined (bubblewrap), not only its plans.

One real system runs the nosy app (its own Python code tries to read the desktop's
token, another app's workspace, `/root` and `/home`, to write outside its workspace
and to read other processes' environments), the echo app beside it, and two copies
of the echo app whose manifests ask for `"sandbox": false` — one allowed by the
user's settings, one not. Pure checks of the shared bubblewrap command builder
come first.
"""

from __future__ import annotations

import copy
import json
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from aios_runtime.bubblewrap import bwrap_argv, mask_list
from aios_runtime.settings import AppSandboxSettings
from tests.controller.system import (
    TEST_CONFIG,
    RunningSystem,
    build_apps_dir,
    copy_echo,
    launch,
)
from tests.security.conftest import HAS_BWRAP, NEEDS_BWRAP, add_security_apps

# ------------------------------------------------------------------ pure logic


def test_masks_skip_system_folders_kept_folders_and_nested_ones(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "keep").mkdir()
    masks = mask_list(
        [
            "/",
            "/usr",
            str(tmp_path / "a" / "b"),
            str(tmp_path / "a"),
            str(tmp_path / "keep"),
            str(tmp_path / "missing"),
            "/etc",
        ],
        keep=[str(tmp_path / "keep")],
    )
    # under /tmp everything is hidden already by the private /tmp
    expected = [] if str(tmp_path).startswith("/tmp/") else [str(tmp_path / "a")]
    assert masks == expected


def test_the_app_command_binds_back_only_what_a_mask_hides(tmp_path: Path) -> None:
    secret, work = tmp_path / "s", tmp_path / "s" / "app" / "workspace"
    work.mkdir(parents=True)
    argv = bwrap_argv(
        "bwrap",
        ["python3", "main.py"],
        cwd=work.parent,
        hidden=[secret, "/home"],
        readable=[work.parent, "/usr/lib"],
        writable=[work],
        share_network=True,
        new_session=False,
        read_only_masks=True,
    )
    assert "--unshare-net" not in argv and "--new-session" not in argv
    assert {"--unshare-pid", "--die-with-parent", "--cap-drop"} <= set(argv)
    text = " ".join(argv)
    assert f"--ro-bind {work.parent} {work.parent}" in text
    assert f"--bind {work} {work}" in text
    assert "--ro-bind /usr/lib" not in text  # readable through / already
    assert argv.index("--bind") < argv.index("--remount-ro")  # masks made read-only last
    assert argv[-3:] == ["--", "python3", "main.py"]


def test_app_sandbox_settings_are_typed() -> None:
    assert AppSandboxSettings.model_validate({}) == AppSandboxSettings()
    got = AppSandboxSettings.model_validate({"unconfined_apps": ["x"], "use_bubblewrap": 0})
    assert got == AppSandboxSettings(use_bubblewrap=False, unconfined_apps=["x"])
    with pytest.raises(ValidationError, match="unconfined_apps"):  # no longer dropped
        AppSandboxSettings.model_validate({"unconfined_apps": "x"})


# ------------------------------------------------------------------ real system


def _unsandboxed_copy(apps: Path, app_id: str, name: str) -> None:
    copy_echo(apps, app_id, name)
    path = apps / app_id / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest.update(sandbox=False, network=True)
    path.write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")


@pytest.fixture(scope="module")
def confined(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[RunningSystem, dict]]:
    if not HAS_BWRAP:
        pytest.skip(NEEDS_BWRAP)
    root = tmp_path_factory.mktemp("confinement")
    apps = build_apps_dir(root / "apps")
    add_security_apps(apps, ("nosy_app",))
    _unsandboxed_copy(apps, "trusted_app", "信任应用")
    _unsandboxed_copy(apps, "untrusted_app", "未获准应用")
    (apps / "echo_app" / "workspace").mkdir(exist_ok=True)
    (apps / "echo_app" / "workspace" / "private.txt").write_text("echo's own data")
    tag = secrets.token_hex(6)
    home_dir = Path("/home") / f"aios-confinement-{tag}"
    root_file = Path("/root") / f".aios-confinement-{tag}"
    home_dir.mkdir()
    (home_dir / "secret.txt").write_text("a user's file")
    root_file.write_text("root's file")
    state = root / "state"
    paths = {
        "token": str(state / "token"),
        # the workspaces live in the state folder; the shipped copy stays in the app
        "other_workspace": str(
            state / "users" / "default" / "workspaces" / "echo_app" / "private.txt"
        ),
        "other_shipped_workspace": str(apps / "echo_app" / "workspace" / "private.txt"),
        "other_app_code": str(apps / "echo_app" / "main.py"),
        "home": str(home_dir / "secret.txt"),
        "root": str(root_file),
        "config": str(root / "config.json"),
        "repo_config": str(Path(__file__).resolve().parents[2] / "config.json"),
    }
    writes = {
        "own_folder": str(apps / "nosy_app"),
        "other_workspace": str(state / "users" / "default" / "workspaces" / "echo_app"),
        "other_shipped_workspace": str(apps / "echo_app" / "workspace"),
        "state": str(state),
        "home": str(home_dir),
        "root": "/root",
        "usr": "/usr/local",
    }
    config = {
        **copy.deepcopy(TEST_CONFIG),
        "app_settings": {
            "nosy_app": {"read": list(paths.values()), "write": list(writes.values())}
        },
        "app_sandbox": {"unconfined_apps": ["trusted_app"]},
    }
    system = launch(root, apps, state_dir=state, config=config)
    try:
        system.wait_app("nosy_app", "running")
        system.wait_app("echo_app", "running")
        # echo's real workspace (made at its first start): data the row must not read
        other = Path(paths["other_workspace"])
        other.parent.mkdir(parents=True, exist_ok=True)
        other.write_text("echo's own data")
        yield system, {"reads": paths, "writes": writes, "apps": apps}
    finally:
        system.stop()
        shutil.rmtree(home_dir, ignore_errors=True)
        root_file.unlink(missing_ok=True)


def _probe(system: RunningSystem) -> dict:
    reply = system.say("好奇应用 探测")
    result = reply["tasks"][0]["result"]
    assert result["status"] == "ok", result  # a confined app still serves the controller
    return result["data"]


@pytest.mark.slow
def test_a1_app_code_reads_neither_the_token_nor_other_apps_nor_homes(
    confined: tuple[RunningSystem, dict],
) -> None:
    system, paths = confined
    assert (system.state_dir / "token").read_text().strip() == system.token
    # each row reads a file that is there (the controller's side sees it)
    for what in ("token", "other_workspace", "other_shipped_workspace", "home", "root"):
        assert Path(paths["reads"][what]).read_text(), what
    reads = _probe(system)["reads"]
    for what, path in paths["reads"].items():
        outcome = reads[path]
        leaked = outcome["ok"] and outcome["value"] not in ("", [])
        assert not leaked, f"the app read {what} ({path}): {outcome}"
        assert system.token not in json.dumps(outcome)


@pytest.mark.slow
def test_a2_app_code_writes_only_its_own_workspace(
    confined: tuple[RunningSystem, dict],
) -> None:
    system, paths = confined
    data = _probe(system)
    for what, folder in paths["writes"].items():
        assert not list(Path(folder).glob("nosy-*.txt")), f"a file planted in {what}"
        if not folder.startswith("/tmp/"):  # under /tmp it lands in its private /tmp
            assert not data["writes"][folder]["ok"], f"the app wrote into {what} ({folder})"
    own = data["own_workspace"]
    assert own["ok"], own
    assert Path(own["value"]).read_text() == "planted"
    assert Path(own["value"]).parent == system.workspace("nosy_app")


@pytest.mark.slow
def test_a3_app_code_sees_no_other_process_nor_its_environment(
    confined: tuple[RunningSystem, dict],
) -> None:
    system, _ = confined
    data = _probe(system)
    environments = data["environments"]
    assert environments["ok"], environments
    assert not any(environments["value"].values()), environments  # no other token seen
    assert len(environments["value"]) <= 2  # bubblewrap's own processes at most


@pytest.mark.slow
def test_a4_api_apps_says_how_each_app_runs(confined: tuple[RunningSystem, dict]) -> None:
    system, _ = confined
    system.wait_app("trusted_app", "running")
    system.wait_app("untrusted_app", "running")
    rows = system.apps()
    assert rows["nosy_app"]["sandbox"] == "bubblewrap"
    assert rows["nosy_app"]["network"] is False
    assert "bubblewrap" in rows["nosy_app"]["sandbox_note"]
    # asked for no sandbox and allowed by the user: unconfined, and it says why
    assert rows["trusted_app"]["sandbox"] == "none"
    assert "allowed" in rows["trusted_app"]["sandbox_note"]
    assert rows["trusted_app"]["network"] is True
    # asked for no sandbox without the user's consent: confined all the same
    assert rows["untrusted_app"]["sandbox"] == "bubblewrap"
    assert "consent" in rows["untrusted_app"]["sandbox_note"]
    # the pid shown is the app's own Python process, not bubblewrap's
    import psutil

    assert "python" in psutil.Process(rows["nosy_app"]["pid"]).name()
    for app_id in ("trusted_app", "untrusted_app"):
        assert (
            system.say(f"{rows[app_id]['name']}专用词 hi")["tasks"][0]["result"]["status"]
            == "ok"
        )
