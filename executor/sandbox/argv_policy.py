"""Which commands `shell_exec` / `process_start` may run, decided before anything runs.

No shell ever runs (SECURITY.md X4): a command is an argv list, or a string split as
a shell would split it, and a string holding unquoted shell operators (`;`, `&&`,
`|`, `>`, `$(`, backticks…) is refused rather than half-interpreted. `argv[0]` must
be a bare name allowed by the whitelist (config ∪ the app's own) and is resolved on
the fixed PATH `/usr/local/bin:/usr/bin:/bin` only, never the workspace (X5);
inline-code flags (`python3 -c`, `perl -e`, `sh -c`, …) are refused, and so are
programs that run other programs (`env`, `xargs`, `timeout`, …) or inline programs
(`awk`) (X1); every argument is resolved as a path (from the working directory; `~`
is the workdir, which is also `HOME`) and must stay inside the workdir (X3) — which
also refuses harmless text that merely looks like an outside path (`echo /`).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from aios_protocol.errors import CommandNotAllowed, PathOutsideWorkdir
from aios_runtime.workdir import is_inside
from executor.tools.catalog import InvalidArgs

__all__ = ["FIXED_PATH", "CommandPolicy", "check_argv", "split_command"]

FIXED_PATH = "/usr/local/bin:/usr/bin:/bin"

# Programs that exist to run other programs or inline code: never allowed.
_COMMAND_RUNNERS = frozenset(
    {
        "env",
        "xargs",
        "nohup",
        "timeout",
        "nice",
        "ionice",
        "stdbuf",
        "setsid",
        "sudo",
        "su",
        "doas",
        "chroot",
        "busybox",
        "strace",
        "ltrace",
        "gdb",
        "script",
        "watch",
        "flock",
        "unshare",
        "nsenter",
        "bwrap",
        "runuser",
        "awk",
        "gawk",
        "mawk",
        "nawk",
        "eval",
        "exec",
        "command",
        "builtin",
    }
)


@dataclass(frozen=True)
class _Interpreter:
    """Short flags that carry inline code, long ones, and short flags that end options."""

    inline_short: frozenset[str]
    inline_long: frozenset[str] = frozenset()
    value_short: frozenset[str] = frozenset()


_SHELL = _Interpreter(frozenset("c"))
_INTERPRETERS: dict[str, _Interpreter] = {
    "python": _Interpreter(frozenset("c"), value_short=frozenset("WXmQ")),
    "perl": _Interpreter(frozenset("eEMm"), value_short=frozenset("Ilx")),
    "ruby": _Interpreter(frozenset("e"), value_short=frozenset("Irx")),
    "node": _Interpreter(frozenset("ep"), frozenset({"--eval", "--print"}), frozenset("r")),
    "deno": _Interpreter(frozenset("e"), frozenset({"eval"})),
    "bun": _Interpreter(frozenset("e"), frozenset({"--eval", "--print"})),
    "php": _Interpreter(frozenset("rBRE"), value_short=frozenset("cdz")),
    "lua": _Interpreter(frozenset("e"), value_short=frozenset("l")),
    "Rscript": _Interpreter(frozenset("e"), frozenset({"--eval"})),
    "tclsh": _Interpreter(frozenset()),
    "sh": _SHELL,
    "bash": _SHELL,
    "dash": _SHELL,
    "zsh": _SHELL,
    "ksh": _SHELL,
    "fish": _Interpreter(frozenset("c"), frozenset({"--command"})),
}
# long options whose value may come as the next argument (`--opt value`)
_VALUE_LONG = frozenset({"--check-hash-based-pycs", "--require", "--import", "--loader"})
_VERSIONED = re.compile(r"^(python|perl|ruby|node|php|lua)[0-9.]*$")
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint"})
_SHELL_OPERATOR = re.compile(r"^[();<>|&`]+$")


@dataclass(frozen=True)
class CommandPolicy:
    """The whitelist of command names (None: any command on the fixed PATH)."""

    whitelist: frozenset[str] | None

    @classmethod
    def build(
        cls, enabled: bool, configured: Iterable[str], per_app: Iterable[str]
    ) -> CommandPolicy:
        if not enabled:
            return cls(None)
        return cls(frozenset(configured) | frozenset(per_app))


def split_command(cmd: object, extra: object = None) -> list[str]:
    """`cmd` (argv list or string) plus `extra` args as one argv list."""
    if isinstance(cmd, str):
        lexer = shlex.shlex(cmd, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            argv = list(lexer)
        except ValueError as exc:
            raise InvalidArgs(f"cmd cannot be split: {exc}") from exc
        operators = [tok for tok in argv if _SHELL_OPERATOR.match(tok)]
        if operators or "`" in cmd:
            bad = operators[0] if operators else "`"
            raise CommandNotAllowed(
                f"shell syntax {bad!r} is not supported: no shell runs; pass one "
                "command as an argv list"
            )
    elif isinstance(cmd, list) and all(isinstance(part, str) for part in cmd):
        argv = list(cmd)
    else:
        raise InvalidArgs("cmd must be a string or a list of strings")
    if extra is not None:
        if not isinstance(extra, list) or not all(isinstance(a, str) for a in extra):
            raise InvalidArgs("args must be a list of strings")
        argv += extra
    if not argv or not argv[0]:
        raise InvalidArgs("cmd is empty")
    if any("\x00" in part for part in argv):
        raise InvalidArgs("cmd contains a NUL byte")
    return argv


def _interpreter(name: str) -> _Interpreter | None:
    if name in _INTERPRETERS:
        return _INTERPRETERS[name]
    match = _VERSIONED.match(name)
    return _INTERPRETERS.get(match.group(1)) if match else None


def _check_inline_code(name: str, args: list[str]) -> None:
    if name == "find" and any(arg in _FIND_EXEC for arg in args):
        raise CommandNotAllowed("find -exec / -delete / -fprint are not allowed")
    spec = _interpreter(name)
    if spec is None:
        return
    value_next = False  # the previous flag takes this argument as its value
    for arg in args:
        if value_next:
            value_next = False
            continue
        if arg == "--" or not arg.startswith("-") or arg == "-":
            return  # the script (or stdin) starts here; later args are the script's
        if arg.startswith("--"):
            option = arg.split("=", 1)[0]
            if option in spec.inline_long:
                raise CommandNotAllowed(f"{name} {arg}: inline code is not allowed")
            value_next = "=" not in arg and option in _VALUE_LONG
            continue
        for index, letter in enumerate(arg[1:], start=1):
            if letter in spec.inline_short:
                raise CommandNotAllowed(f"{name} {arg}: inline code is not allowed")
            if letter in spec.value_short:
                if letter == "m" and name.startswith("python"):
                    return  # `python -m mod ...`: the rest belongs to the module
                value_next = index == len(arg) - 1  # `-W ignore`: the value comes next
                break


def _path_candidates(arg: str) -> list[str]:
    if not arg:
        return []
    found = [] if arg.startswith("-") else [arg]
    if "=" in arg:
        found.append(arg.split("=", 1)[1])
    if arg.startswith("-"):
        cut = min((i for i in (arg.find("/"), arg.find("~")) if i > 0), default=-1)
        if cut > 0:
            found.append(arg[cut:])
    return [cand for cand in found if cand]


def check_path_args(args: list[str], workdir: Path, cwd: Path) -> None:
    for arg in args:
        for cand in _path_candidates(arg):
            if cand.startswith("~"):
                if cand != "~" and not cand.startswith("~/"):
                    raise PathOutsideWorkdir(f"argument {arg!r} names another user's home")
                target = workdir / cand[2:]
            else:
                target = Path(cand) if os.path.isabs(cand) else cwd / cand
            if not is_inside(Path(os.path.realpath(target)), workdir):
                raise PathOutsideWorkdir(f"argument {arg!r} points outside the workdir")


def check_argv(
    argv: list[str], policy: CommandPolicy, workdir: Path, cwd: Path
) -> list[str]:
    """`argv` with `argv[0]` replaced by its absolute path on the fixed PATH, or refuse."""
    name, args = argv[0], argv[1:]
    if "/" in name or name in (".", ".."):
        raise CommandNotAllowed(f"{name!r}: give a bare command name, not a path")
    if name in _COMMAND_RUNNERS:
        raise CommandNotAllowed(f"{name!r} runs other programs and is never allowed")
    if policy.whitelist is not None and name not in policy.whitelist:
        allowed = ", ".join(sorted(policy.whitelist)) or "(none)"
        raise CommandNotAllowed(f"{name!r} is not in the command whitelist ({allowed})")
    exe = shutil.which(name, path=FIXED_PATH)
    if exe is None:
        raise CommandNotAllowed(f"{name!r} not found on {FIXED_PATH}")
    _check_inline_code(name, args)
    check_path_args(args, workdir, cwd)
    return [exe, *args]
