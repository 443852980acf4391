"""Pure logic: which commands shell_exec / process_start may run (SECURITY.md X1, X3–X5)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from aios_protocol.errors import CommandNotAllowed, PathOutsideWorkdir
from executor.sandbox.argv_policy import (
    FIXED_PATH,
    CommandPolicy,
    check_argv,
    split_command,
)
from executor.tools.catalog import InvalidArgs

POLICY = CommandPolicy.build(True, ["ls", "cat", "echo", "python3"], ["grep"])


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    root = (tmp_path / "apps" / "app1").resolve()
    root.mkdir(parents=True)
    (tmp_path / "apps" / "other_app").mkdir()
    (tmp_path / "apps" / "other_app" / "secret").write_text("s")
    return root


def check(argv: list[str], workdir: Path, policy: CommandPolicy = POLICY) -> list[str]:
    return check_argv(argv, policy, workdir, workdir)


def test_whitelisted_command_is_resolved_on_the_fixed_path(workdir: Path) -> None:
    argv = check(["ls", "-la"], workdir)
    assert argv[0] in ("/usr/local/bin/ls", "/usr/bin/ls", "/bin/ls")
    assert argv[1:] == ["-la"]


def test_app_whitelist_extends_the_configured_one(workdir: Path) -> None:
    assert check(["grep", "x", "f"], workdir)[0].endswith("/grep")
    with pytest.raises(CommandNotAllowed):
        check(["grep", "x"], workdir, CommandPolicy.build(True, ["ls"], []))


def test_not_whitelisted_is_refused_and_disabled_whitelist_allows(workdir: Path) -> None:
    with pytest.raises(CommandNotAllowed) as caught:
        check(["rm", "-rf", "x"], workdir)
    assert "whitelist" in caught.value.message
    assert check(["rm", "x"], workdir, CommandPolicy.build(False, [], []))[0].endswith(
        "/rm"
    )


def test_x5_workspace_binary_never_runs_in_place_of_the_real_one(workdir: Path) -> None:
    """X5: a workspace file named `ls` is never what runs; argv[0] must be a bare name."""
    fake = workdir / "ls"
    fake.write_text("#!/bin/sh\necho pwned\n")
    fake.chmod(0o755)
    assert check(["ls"], workdir)[0] != str(fake)
    for name in ("./ls", str(fake), "sub/ls"):
        with pytest.raises(CommandNotAllowed):
            check([name], workdir)


@pytest.mark.parametrize(
    "argv",
    [
        ["python3", "-c", "import socket"],
        ["python3", "-Ic", "print(1)"],
        ["python3", "-cprint(1)"],
        ["python3", "-u", "-c", "print(1)"],
    ],
)
def test_x1_inline_code_flags_are_refused(workdir: Path, argv: list[str]) -> None:
    """X1: `python3 -c …` (in any spelling) is refused."""
    with pytest.raises(CommandNotAllowed) as caught:
        check(argv, workdir)
    assert "inline code" in caught.value.message


@pytest.mark.parametrize(
    "argv",
    [
        ["perl", "-e", "1"],
        ["node", "--eval", "1"],
        ["node", "-p", "1"],
        ["bash", "-c", "id"],
        ["sh", "-c", "id"],
        ["php", "-r", "1;"],
        ["ruby", "-e", "1"],
    ],
)
def test_x1_other_interpreters_inline_flags(workdir: Path, argv: list[str]) -> None:
    policy = CommandPolicy.build(False, [], [])
    if shutil.which(argv[0], path=FIXED_PATH) is None:
        pytest.skip(f"{argv[0]} not installed here")
    with pytest.raises(CommandNotAllowed):
        check(argv, workdir, policy)


def test_python_script_arguments_are_not_mistaken_for_flags(workdir: Path) -> None:
    (workdir / "tool.py").write_text("print(1)")
    assert check(["python3", "tool.py", "-c", "x"], workdir)[1:] == ["tool.py", "-c", "x"]
    assert check(["python3", "-W", "ignore", "tool.py"], workdir)[-1] == "tool.py"
    assert check(["python3", "-m", "json.tool", "-c"], workdir)[1] == "-m"


@pytest.mark.parametrize("name", ["env", "xargs", "timeout", "awk", "nohup", "sudo"])
def test_command_runners_are_never_allowed(workdir: Path, name: str) -> None:
    with pytest.raises(CommandNotAllowed):
        check([name, "ls"], workdir, CommandPolicy.build(False, [], []))


def test_find_exec_is_refused(workdir: Path) -> None:
    with pytest.raises(CommandNotAllowed):
        check(
            ["find", ".", "-exec", "id", ";"], workdir, CommandPolicy.build(False, [], [])
        )


@pytest.mark.parametrize(
    "argv",
    [
        ["cat", "/etc/passwd"],
        ["cat", "../other_app/secret"],
        ["cat", "sub/../../other_app/secret"],
        ["cat", "--file=/etc/passwd"],
        ["cat", "-f/etc/passwd"],
        ["cat", "~root/.bashrc"],
        ["ls", "/"],
    ],
)
def test_x3_path_arguments_outside_the_workdir_are_refused(
    workdir: Path, argv: list[str]
) -> None:
    """X3: `cat /etc/passwd`, `cat ../other_app/secret` and friends are refused."""
    with pytest.raises(PathOutsideWorkdir):
        check(argv, workdir)


def test_x3_symlink_argument_pointing_outside_is_refused(workdir: Path) -> None:
    os.symlink("/etc/passwd", workdir / "pw")
    with pytest.raises(PathOutsideWorkdir):
        check(["cat", "pw"], workdir)


def test_paths_inside_and_home_tilde_are_fine(workdir: Path) -> None:
    (workdir / "a.txt").write_text("a")
    assert check(["cat", "a.txt", str(workdir / "a.txt"), "~/a.txt", "~"], workdir)


def test_x4_list_form_passes_shell_syntax_literally() -> None:
    """X4: `["echo", "$(id); rm -rf ~"]` stays one literal argument."""
    assert split_command(["echo", "$(id); rm -rf ~"]) == ["echo", "$(id); rm -rf ~"]


@pytest.mark.parametrize(
    "cmd", ["echo $(id)", "ls; rm -rf ~", "ls && id", "ls | cat", "echo `id`", "cat x > y"]
)
def test_x4_string_form_with_shell_operators_is_refused(cmd: str) -> None:
    """X4: a command string with `;`, `&&`, `|`, backticks is never given to a shell."""
    with pytest.raises(CommandNotAllowed) as caught:
        split_command(cmd)
    assert "no shell" in caught.value.message


def test_string_form_is_split_like_a_shell_would() -> None:
    assert split_command("echo 'a b' \"c;d\"") == ["echo", "a b", "c;d"]
    assert split_command("ls", ["-l", "x"]) == ["ls", "-l", "x"]


@pytest.mark.parametrize("cmd", ["", [], ["echo", 5], "echo 'unclosed", ["a\x00b"]])
def test_malformed_commands_are_invalid_args(cmd: object) -> None:
    with pytest.raises(InvalidArgs):
        split_command(cmd)
