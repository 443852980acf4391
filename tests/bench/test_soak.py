"""`aios bench --soak 0.1 --json` runs the mixed soak end to end and reports growth.

Real processes (the soak starts the system itself in a temp folder on ephemeral
ports). The growth figures are checked for shape and against the soak's own stated
bounds; nothing else about timing is asserted. How the soak decides "flat" from its
samples is checked on made-up samples.
"""

from __future__ import annotations

import json
import subprocess
import sys

import psutil
import pytest

from bench.soak import BOUNDS, WINDOW, growth_report
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
        assert row["flat"], (label, row)
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


def samples(rss: list[float], label: str = "controller") -> list[dict]:
    return [{label: {"fds": 20, "threads": 10, "rss_mb": value}} for value in rss]


def test_one_sample_at_either_end_neither_hides_nor_invents_growth() -> None:
    steady = [100.0] * 30
    # a burst in the last sample, or a collection just before the first one
    flat, rows = growth_report(samples([*steady[:-1], 160.0]), 1000)
    assert flat and rows["controller"]["flat"], rows
    flat, rows = growth_report(samples([40.0, *steady[1:]]), 1000)
    assert flat, rows
    # growth all along the measured part is growth, whatever the end samples say
    rising = [100.0 + 2 * i for i in range(30)]
    rising[-1] = 100.0
    flat, rows = growth_report(samples(rising), 1000)
    assert not flat and not rows["controller"]["flat"], rows
    assert rows["controller"]["rss_mb"]["growth"] > BOUNDS["rss_mb"]
    assert rows["controller"]["rss_kb_per_operation"] > 0
    assert len(rising) > 2 * WINDOW


def test_a_process_gone_at_the_end_is_not_flat() -> None:
    after = samples([100.0] * 20)
    for row in after[-WINDOW:]:
        row.pop("controller")
        row["executor"] = {"fds": 5, "threads": 3, "rss_mb": 50.0}
    flat, rows = growth_report(after, 100)
    assert not flat
    assert rows["controller"] == {"flat": False, "missing": True}
