"""`shell_exec` and `process_start`: whitelisted programs, never a shell, sandboxed.

Both check the command with `argv_policy` (whitelist, fixed PATH, no inline code,
every path argument inside the workdir) and run it through `sandbox`. Result of a
foreground run: `{"returncode", "stdout", "stderr", "truncated", "stdout_size",
"stderr_size"}` (output past `limits.output_bytes` is cut: `truncated`, and the sizes
say how many bytes each stream wrote in all). A non-zero exit
is still status `ok` — the exit code is data the app plans with (`grep` finding
nothing, a test failing). Running past the timeout is status `error`, code
`tool_timeout`, with the partial output in `result`; the whole process tree is
killed. A background `process_start` answers `{"pid", "cmd", "started", "log",
"background": true}` at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from aios_protocol.errors import ToolTimeout
from aios_runtime.workdir import resolve_in_workdir
from executor.sandbox.argv_policy import CommandPolicy, check_argv, split_command
from executor.tools.catalog import InvalidArgs

if TYPE_CHECKING:
    from executor.toolbox import ToolContext

__all__ = ["prepare_command", "process_start", "shell_exec"]


def prepare_command(
    ctx: ToolContext, cmd: Any, extra: Any = None, cwd_arg: Any = None
) -> tuple[list[str], list[str], Path]:
    """(argv to execute, argv as the app wrote it, working directory) — or refuse."""
    workdir = ctx.app.workdir
    written = split_command(cmd, extra)
    cwd = resolve_in_workdir(workdir, cwd_arg or "", arg="cwd")
    if not cwd.is_dir():
        raise InvalidArgs(f"cwd {cwd_arg!r} is not a directory")
    sandbox = ctx.settings.tool_sandbox
    policy = CommandPolicy.build(
        sandbox.enable_shell_whitelist, sandbox.shell_whitelist, ctx.app.shell_whitelist
    )
    return check_argv(written, policy, workdir, cwd), written, cwd


def _foreground(ctx: ToolContext, argv: list[str], cwd: Path) -> dict[str, Any]:
    run = ctx.sandbox.run(
        argv, workdir=ctx.app.workdir, cwd=cwd, timeout=ctx.timeout, hide=ctx.hidden_dirs()
    )
    output = {
        "stdout": run.stdout,
        "stderr": run.stderr,
        "truncated": run.truncated,
        "stdout_size": run.stdout_size,
        "stderr_size": run.stderr_size,
    }
    if run.timed_out:
        raise ToolTimeout(
            f"{Path(argv[0]).name} killed after {ctx.timeout:g}s (with its child processes)",
            detail={"returncode": None, **output},
        )
    return {"returncode": run.returncode, **output}


def shell_exec(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    argv, _, cwd = prepare_command(ctx, args["cmd"], cwd_arg=args.get("cwd"))
    return _foreground(ctx, argv, cwd)


def process_start(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    argv, written, cwd = prepare_command(
        ctx, args["cmd"], args.get("args"), cwd_arg=args.get("cwd")
    )
    if not args.get("background"):
        return _foreground(ctx, argv, cwd)
    entry = ctx.processes.start(
        ctx.app.identity,  # the app process serving this call's user
        ctx.app.workdir,
        argv,
        cwd,
        display_cmd=written,
        hide=ctx.hidden_dirs(),
    )
    return {
        "pid": entry.pid,
        "cmd": entry.cmd,
        "started": entry.started,
        "log": entry.log,
        "background": True,
    }
