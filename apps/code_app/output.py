"""What a run printed, as the code app shows and says it.

The view shows the whole output (`RunOutput.text`: stdout, then stderr) below the
code; when the executor had to cut it (`limits.output_bytes`, the result's
`truncated`), the view marks the cut with the full size (`stdout_size` +
`stderr_size` of the result). The sentence said and put in the status line stays
short: the output itself when it is one short line, else how long it is, and
always that it was cut when it was. Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aios_sdk import Turn

__all__ = [
    "MAX_SAID",
    "RunOutput",
    "human_size",
    "last_line",
    "run_output",
    "said_output",
]

MAX_SAID = 200  # the longest output line said whole in the message


@dataclass(frozen=True)
class RunOutput:
    """The output of one run: what is shown, whether it was cut, its full size."""

    text: str
    stdout: str
    stderr: str
    truncated: bool = False
    size: int | None = None  # bytes written in all, when the executor said

    @property
    def shown_size(self) -> int:
        return len(self.text.encode("utf-8"))


def run_output(result: Mapping[str, Any]) -> RunOutput:
    """The output of a `shell_exec` result (or the partial result of a timeout)."""
    stdout = str(result.get("stdout") or "")
    stderr = str(result.get("stderr") or "")
    text = stdout
    if stderr:
        text += ("\n" if stdout and not stdout.endswith("\n") else "") + stderr
    out_size, err_size = result.get("stdout_size"), result.get("stderr_size")
    size = None
    if isinstance(out_size, int) and isinstance(err_size, int):
        size = out_size + err_size
    return RunOutput(text, stdout, stderr, bool(result.get("truncated")), size)


def human_size(size: int, turn: Turn) -> str:
    """`850 字节` / `850 bytes`, `19.5 KB`, `1.2 MB`."""
    if size < 1024:
        return turn.tr(f"{size} 字节", f"{size} bytes")
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def said_output(turn: Turn, output: RunOutput) -> str:
    """The message of a run that exited 0: short, and never hiding a cut."""
    if output.truncated:
        shown = human_size(output.shown_size, turn)
        if output.size is not None:
            full = human_size(output.size, turn)
            return turn.tr(
                f"运行完成；输出太长，已截断：只显示前 {shown}，共 {full}",
                f"Finished; the output was too long and is cut: showing the first "
                f"{shown} of {full}",
            )
        return turn.tr(
            f"运行完成；输出太长，已截断：只显示前 {shown}",
            f"Finished; the output was too long and is cut: showing the first {shown}",
        )
    shown = output.stdout.strip()
    if not shown:
        return turn.tr("运行结果：（没有输出）", "Output: (no output)")
    lines = shown.splitlines()
    if len(lines) == 1 and len(shown) <= MAX_SAID:
        return turn.tr(f"运行结果：{shown}", f"Output: {shown}")
    count = len(lines)
    return turn.tr(
        f"运行完成，输出 {count} 行",
        f"Finished; {count} line{'s' * (count != 1)} of output",
    )


def last_line(text: str) -> str:
    """The last line of `text`, cut to `MAX_SAID` characters with a "…" when cut."""
    line = (text.strip().splitlines() or [""])[-1]
    return line if len(line) <= MAX_SAID else line[: MAX_SAID - 1] + "…"
