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


def test_a_forked_app_gets_the_layout_of_its_bubblewrap_command(tmp_path: Path) -> None:
    """The app template's children and bubblewrap mount one layout (`sandbox_layout`):
    the plan a forked app confines itself with holds exactly the command's masks,
    read-only binds and writable bind."""
    from controller.apps.confinement import AppConfinement, Confiner
    from controller.apps.discovery import load_app

    state, apps = tmp_path / "state", tmp_path / "apps"
    state.mkdir()
    shutil.copytree(Path(__file__).parent / "apps" / "nosy_app", apps / "nosy_app")
    spec = load_app(apps / "nosy_app", state / "workspaces")
    confiner = Confiner(
        AppSandboxSettings(),
        state_dir=state,
        config_file=tmp_path / "config.json",
        apps_dirs=[apps],
    )
    how = AppConfinement("bubblewrap", "test", network=False)
    argv = confiner.command(spec, ["python3", "main.py"], how)
    plan = confiner.fork_plan(spec, how)

    def operands(flag: str) -> list[str]:
        return [argv[i + 1] for i, arg in enumerate(argv) if arg == flag]

    assert plan["confine"] is True and plan["entry"] == str(spec.entry)
    assert plan["masks"] == [m for m in operands("--tmpfs") if m != "/tmp"]
    assert plan["masks"] == operands("--remount-ro")
    assert plan["read_only"] == operands("--ro-bind")[1:]  # after `--ro-bind / /`
    assert plan["writable"] == operands("--bind") == [str(spec.workdir)]
    assert str(spec.folder) in plan["read_only"]  # under /tmp here: bound back
    unconfined = confiner.fork_plan(spec, AppConfinement("none", "test", network=False))
    assert unconfined["confine"] is False and "masks" not in unconfined


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


@pytest.fixture(scope="module", params=["forked", "bubblewrap"])
def confined(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[RunningSystem, dict]]:
    """The system with its apps forked from the app template (the default) or each
    started as a new interpreter inside bubblewrap (`apps.fork_from_template` off):
    every row holds both ways."""
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
        "apps": {
            **TEST_CONFIG.get("apps", {}),
            "fork_from_template": request.param == "forked",
        },
    }
    system = launch(root, apps, state_dir=state, config=config)
    try:
        system.wait_app("nosy_app", "running")
        system.wait_app("echo_app", "running")
        # echo's real workspace (made at its first start): data the row must not read
        other = Path(paths["other_workspace"])
        other.parent.mkdir(parents=True, exist_ok=True)
        other.write_text("echo's own data")
        yield system, {"reads": paths, "writes": writes, "apps": apps, "how": request.param}
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


@pytest.mark.slow
def test_each_app_runs_forked_from_the_template_or_inside_bubblewrap(
    confined: tuple[RunningSystem, dict],
) -> None:
    """The confined app's process descends from the app template (through the process
    that keeps it) when apps are forked, from bubblewrap otherwise."""
    import psutil

    system, paths = confined
    pid = system.apps()["nosy_app"]["pid"]
    ancestors = [" ".join(p.cmdline()) for p in psutil.Process(pid).parents()[:3]]
    forked = any("aios_sdk.zygote" in line for line in ancestors)
    wrapped = any(line.split(" ", 1)[0].endswith("bwrap") for line in ancestors)
    if paths["how"] == "forked":
        assert forked and not wrapped, ancestors
    else:
        assert wrapped and not forked, ancestors


@pytest.mark.slow
def test_apps_outlive_a_killed_template_inside_bubblewrap(
    confined: tuple[RunningSystem, dict],
) -> None:
    """`kill -9` of the app template takes its apps along; each is restarted as a new
    interpreter inside bubblewrap, still confined (last: it changes the system)."""
    import os
    import signal

    import psutil

    system, paths = confined
    if paths["how"] != "forked":
        pytest.skip("only a system whose apps are forked has a template to kill")
    before = system.apps()["nosy_app"]["pid"]
    template = psutil.Process(before).parent()
    assert template is not None and "aios_sdk.zygote" in " ".join(template.cmdline())
    os.kill(template.pid, signal.SIGKILL)

    def restarted() -> dict | None:
        row = system.apps()["nosy_app"]
        moved = row["status"] == "running" and row["pid"] not in (None, before)
        return row if moved else None

    row = system.wait_for(restarted, 30, "nosy_app to run again")
    ancestors = [" ".join(p.cmdline()) for p in psutil.Process(row["pid"]).parents()[:3]]
    assert any(line.split(" ", 1)[0].endswith("bwrap") for line in ancestors), ancestors
    reads = _probe(system)["reads"]
    for what, path in paths["reads"].items():
        outcome = reads[path]
        assert not (outcome["ok"] and outcome["value"] not in ("", [])), what
