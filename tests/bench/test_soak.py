"""`aios bench --soak 0.1 --json` runs the mixed soak end to end and reports growth.

Real processes (the soak starts the system itself in a temp folder on ephemeral
ports). The growth figures are checked for shape and against the soak's own stated
bounds; nothing else about timing is asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys

import psutil
import pytest

from bench.soak import BOUNDS
from tests.procs import ROOT


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_short_soak_reports_flat_growth_per_process() -> None:
    before = {p.pid for p in psutil.process_iter()}
    run = subprocess.run(
        [sys.executable, "-m", "aios", "bench", "--soak", "0.1", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=280,
    )
    report = json.loads(run.stdout.strip().splitlines()[-1])["soak"]
    assert report["operations"] >= 30, report
    assert report["failed"] == 0, report
    labels = set(report["processes"])
    assert {"controller", "executor", "hello_app"} <= labels, labels
    for label, row in report["processes"].items():
        for key, bound in BOUNDS.items():
            assert set(row[key]) == {"after_warmup", "end", "growth"}
            assert row[key]["growth"] <= bound, (label, key, row[key])
    assert report["flat"] and run.returncode == 0, run.stderr[-2000:]
    leftover = [
        p
        for p in psutil.process_iter(["pid", "cmdline"])
        if p.pid not in before and "aios-soak-" in " ".join(p.info["cmdline"] or [])
    ]
    assert not leftover, leftover
