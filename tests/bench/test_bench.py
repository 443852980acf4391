"""`aios bench --quick --json` runs end to end and reports every figure.

Real processes (the bench starts the system itself in a temp folder on ephemeral
ports); no assertion on any timing or size: only that each figure was measured.
"""

from __future__ import annotations

import json
import subprocess
import sys

import psutil
import pytest

from bench.run import KEYS
from tests.procs import ROOT


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_quick_bench_prints_one_json_object_with_every_figure() -> None:
    before = {p.pid for p in psutil.process_iter()}
    run = subprocess.run(
        [sys.executable, "-m", "aios", "bench", "--quick", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=380,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, run.stdout
    report = json.loads(lines[0])
    assert set(KEYS) <= set(report)
    for key in KEYS:
        assert isinstance(report[key], int | float), (key, report[key])
    assert report["meta"]["mode"] == "quick"
    assert report["meta"]["floor_stack"].startswith("Flask on waitress")
    # nothing the bench started is left running
    left = [
        _cmdline(p)
        for p in psutil.process_iter()
        if p.pid not in before and "aios-bench-" in " ".join(_cmdline(p))
    ]
    assert left == []


def _cmdline(proc: psutil.Process) -> list[str]:
    try:
        return proc.cmdline()
    except psutil.Error:
        return []
