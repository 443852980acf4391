"""`aios bench --soak MINUTES`: a long mixed run and the growth of every process.

The soak starts the shipped apps (copies, in a temporary folder, like the rest of
the benchmark) and for MINUTES runs a fixed mix in a loop: an instruction, an app
opened and one of its actions, and a confirmation answered (a scheduler job whose
command is outside the whitelist asks the user; the soak denies it, which drops the
job). Every few seconds it samples, per process (controller, executor, each app —
bubblewrap's helpers counted with their app), open file descriptors, threads and
resident memory. The first `WARMUP_SHARE` of the run is warm-up (long enough to fill
the controller's bounded structures: the sessions kept in memory, the event buffer).
Growth is the median of the last `WINDOW` samples minus the median of the first
`WINDOW` samples after warm-up: one sample taken in a burst or just after a
collection neither hides growth nor invents it. A process is flat when its growth
stays within `BOUNDS`, the run when every process is; a process that was there
after warm-up and is gone at the end is not flat.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.system import RunningSystem, prepare_folder

__all__ = ["BOUNDS", "WARMUP_SHARE", "WINDOW", "growth_report", "run_soak", "soak"]

WARMUP_SHARE = 0.3
SAMPLE_EVERY = 2.0  # seconds
WINDOW = 5  # samples at each end of the measured part, of which the median counts
# growth allowed after warm-up, per process: a leak of one fd / thread per operation
# passes these within seconds; noise (a pool thread, allocator slack) stays below
BOUNDS = {"fds": 8, "threads": 4, "rss_mb": 20.0}
INSTRUCTIONS = ("跟我打个招呼", "你好", "现在几点了")
RISKY_JOB = {
    "name": "soak confirmation",
    "execution_type": "command",
    "schedule_type": "interval",
    "interval_s": 3600,
    "app_id": "hello_app",
    "command": ["date", "-u"],  # outside the whitelist: the user is asked first
}


def _progress(text: str) -> None:
    print(f"[soak] {text}", file=sys.stderr, flush=True)


def sample(system: RunningSystem) -> dict[str, dict[str, float]]:
    """Per process label: open fds, threads and RSS (MiB) now."""
    import psutil

    from bench.system import _process_label

    assert system.proc is not None
    root = psutil.Process(system.proc.pid)
    found: dict[str, dict[str, float]] = {}
    for proc in [root, *root.children(recursive=True)]:
        try:
            with proc.oneshot():
                label = _process_label(proc)
                row = found.setdefault(label, {"fds": 0, "threads": 0, "rss_mb": 0.0})
                row["fds"] += proc.num_fds()
                row["threads"] += proc.num_threads()
                row["rss_mb"] += proc.memory_info().rss / 2**20
        except psutil.Error:
            continue
    return found


def _operations(system: RunningSystem) -> list[Callable[[], bool]]:
    """The mix, each one operation returning whether it went as expected."""
    client = system.client()
    turn = {"n": 0}

    def instruction() -> bool:
        text = INSTRUCTIONS[turn["n"] % len(INSTRUCTIONS)]
        turn["n"] += 1
        status, _ = client.post("/api/instruction", {"text": text, "session_id": None})
        return status == 200

    def open_and_act() -> bool:
        status, reply = client.post("/api/apps/hello_app/open", {})
        if status != 200 or not isinstance(reply, dict):
            return False
        actions = [a for a in reply.get("actions") or [] if a.get("type") == "button"]
        if not actions:
            return True
        action = actions[0]
        body = {
            "session_id": reply.get("session_id"),
            "action_id": action.get("action_id"),
            "type": "button",
        }
        status, _ = client.post("/api/apps/hello_app/action", body)
        return status == 200

    def confirmation() -> bool:
        status, job = client.post("/api/schedules", RISKY_JOB)
        if status != 201 or not isinstance(job, dict):
            return False
        status, listing = client.get("/api/confirmations")
        asked = [
            c
            for c in (listing or {}).get("confirmations", [])
            if c.get("job_id") == job.get("id")
        ]
        answered = len(asked) == 1 and all(
            client.post(f"/api/confirmations/{c['confirmation_id']}", {"decision": "deny"})[
                0
            ]
            == 200
            for c in asked
        )
        # a denied job is dropped; deleting it again answers 404
        status, _ = client.request("DELETE", f"/api/schedules/{job.get('id')}")
        return answered and status in (200, 404)

    return [instruction, open_and_act, confirmation]


def soak(system: RunningSystem, minutes: float) -> dict[str, Any]:
    """Run the mix on `system` for `minutes`; the growth report."""
    operations = _operations(system)
    seconds = minutes * 60
    started = time.monotonic()
    warm_until = started + seconds * WARMUP_SHARE
    samples: list[tuple[float, dict[str, dict[str, float]]]] = []
    counts = {"operations": 0, "failed": 0, "after_warmup": 0}
    next_sample = started
    index = 0
    while time.monotonic() - started < seconds:
        ok = operations[index % len(operations)]()
        index += 1
        counts["operations"] += 1
        counts["failed"] += 0 if ok else 1
        now = time.monotonic()
        counts["after_warmup"] += now >= warm_until
        if now >= next_sample:
            samples.append((now, sample(system)))
            next_sample = now + SAMPLE_EVERY
    samples.append((time.monotonic(), sample(system)))
    after = [s for t, s in samples if t >= warm_until] or [samples[-1][1]]
    flat, processes = growth_report(after, counts["after_warmup"])
    return {
        "minutes": minutes,
        "seconds": round(time.monotonic() - started, 1),
        "operations": counts["operations"],
        "operations_after_warmup": counts["after_warmup"],
        "failed": counts["failed"],
        "samples": len(samples),
        "samples_after_warmup": len(after),
        "warmup_share": WARMUP_SHARE,
        "bounds": BOUNDS,
        "flat": flat,
        "processes": processes,
    }


def growth_report(
    after: list[dict[str, dict[str, float]]], operations: int
) -> tuple[bool, dict[str, dict[str, Any]]]:
    """(flat, per process) from the samples taken after warm-up, in order.

    A figure's start and end are the medians of the first and the last `WINDOW`
    samples (fewer when the run took fewer); a process sampled at the start but not
    at the end is `missing`, and not flat.
    """
    window = max(1, min(WINDOW, len(after) // 2))
    head, tail = after[:window], after[-window:]
    labels = {label for s in (*head, *tail) for label in s}
    processes: dict[str, dict[str, Any]] = {}
    flat = True
    for label in sorted(labels):
        start = [s[label] for s in head if label in s]
        end = [s[label] for s in tail if label in s]
        if not start or not end:
            processes[label] = {"flat": bool(end), "missing": not end}
            flat &= bool(end)
            continue
        row: dict[str, Any] = {}
        fine = True
        for key, bound in BOUNDS.items():
            first = statistics.median(r[key] for r in start)
            last = statistics.median(r[key] for r in end)
            growth = round(last - first, 1)
            row[key] = {
                "after_warmup": round(first, 1),
                "end": round(last, 1),
                "growth": growth,
            }
            fine &= growth <= bound
        # what the process kept per operation after warm-up, if it kept anything
        row["rss_kb_per_operation"] = round(
            max(0.0, row["rss_mb"]["growth"]) * 1024 / max(1, operations), 3
        )
        row["flat"] = fine
        flat &= fine
        processes[label] = row
    return flat, processes


def render(report: dict[str, Any]) -> str:
    lines = [
        f"soak: {report['minutes']} min, {report['operations']} operations "
        f"({report['failed']} failed, {report['operations_after_warmup']} after "
        f"warm-up), growth after warm-up "
        f"(bounds: fds +{BOUNDS['fds']}, threads +{BOUNDS['threads']}, "
        f"RSS +{BOUNDS['rss_mb']:g} MiB) — {'flat' if report['flat'] else 'GROWING'}",
        f"{'process':<16}{'fds':>12}{'threads':>12}{'RSS MiB':>14}",
    ]
    for label, row in report["processes"].items():
        if "rss_mb" not in row:
            lines.append(f"{label:<16}{'gone' if row['missing'] else 'new':>38}")
            continue
        cells = [f"{row[k]['end']:g} ({row[k]['growth']:+g})" for k in BOUNDS]
        verdict = "flat" if row["flat"] else "GROWING"
        lines.append(f"{label:<16}{cells[0]:>12}{cells[1]:>12}{cells[2]:>14}  {verdict}")
    return "\n".join(lines)


def run_soak(args: argparse.Namespace) -> int:
    """`aios bench --soak MINUTES [--json]`: 0 when the run was flat and nothing failed."""
    with tempfile.TemporaryDirectory(prefix="aios-soak-") as tmp:
        folder = prepare_folder(Path(tmp), Path(args.apps_dir), Path(args.config))
        settings = json.loads(folder.config.read_text(encoding="utf-8"))
        settings["apps"] = {
            **settings.get("apps", {}),
            "start_at_launch": True,
        }  # all measured
        # a command outside the whitelist asks the user (instead of being refused), so
        # the mix has a confirmation to answer
        settings["tool_sandbox"] = {
            **settings.get("tool_sandbox", {}),
            "ask_outside_whitelist": True,
        }
        folder.config.write_text(json.dumps(settings, ensure_ascii=False), encoding="utf-8")
        system = RunningSystem(folder.shipped_apps, folder.config, folder.state_dir("soak"))
        _progress(f"starting the system, then {args.soak:g} min of mixed work")
        system.start()
        try:
            report = soak(system, args.soak)
        finally:
            system.stop()
    if args.json:
        print(json.dumps({"soak": report}, ensure_ascii=False))
    else:
        print(render(report))
    return 0 if report["flat"] and not report["failed"] else 1
