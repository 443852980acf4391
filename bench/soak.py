"""`aios bench --soak MINUTES`: a long mixed run and the growth of every process.

The soak starts the shipped apps (copies, in a temporary folder, like the rest of
the benchmark) and for MINUTES runs a fixed mix in a loop: an instruction, an app
opened and one of its actions, and a confirmation answered (a scheduler job whose
command is outside the whitelist asks the user; the soak denies it, which drops the
job). Every few seconds it samples, per process (controller, executor, each app —
bubblewrap's helpers counted with their app), open file descriptors, threads and
resident memory. The first `WARMUP_SHARE` of the run is warm-up; growth is the last
sample minus the first sample after warm-up, and the run is flat when every
process's growth stays within `BOUNDS`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.system import RunningSystem, prepare_folder

__all__ = ["BOUNDS", "WARMUP_SHARE", "run_soak", "soak"]

WARMUP_SHARE = 0.3
SAMPLE_EVERY = 2.0  # seconds
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
    counts = {"operations": 0, "failed": 0}
    next_sample = started
    index = 0
    while time.monotonic() - started < seconds:
        ok = operations[index % len(operations)]()
        index += 1
        counts["operations"] += 1
        counts["failed"] += 0 if ok else 1
        now = time.monotonic()
        if now >= next_sample:
            samples.append((now, sample(system)))
            next_sample = now + SAMPLE_EVERY
    samples.append((time.monotonic(), sample(system)))
    after = [s for t, s in samples if t >= warm_until] or [samples[-1][1]]
    first, last = after[0], samples[-1][1]
    processes: dict[str, dict[str, Any]] = {}
    flat = True
    for label in sorted(set(first) & set(last)):
        row: dict[str, Any] = {}
        for key, bound in BOUNDS.items():
            growth = round(last[label][key] - first[label][key], 1)
            row[key] = {
                "after_warmup": round(first[label][key], 1),
                "end": round(last[label][key], 1),
                "growth": growth,
            }
            flat &= growth <= bound
        processes[label] = row
    return {
        "minutes": minutes,
        "seconds": round(time.monotonic() - started, 1),
        "operations": counts["operations"],
        "failed": counts["failed"],
        "samples": len(samples),
        "warmup_share": WARMUP_SHARE,
        "bounds": BOUNDS,
        "flat": flat,
        "processes": processes,
    }


def render(report: dict[str, Any]) -> str:
    lines = [
        f"soak: {report['minutes']} min, {report['operations']} operations "
        f"({report['failed']} failed), growth after warm-up "
        f"(bounds: fds +{BOUNDS['fds']}, threads +{BOUNDS['threads']}, "
        f"RSS +{BOUNDS['rss_mb']:g} MiB) — {'flat' if report['flat'] else 'GROWING'}",
        f"{'process':<16}{'fds':>12}{'threads':>12}{'RSS MiB':>14}",
    ]
    for label, row in report["processes"].items():
        cells = [f"{row[k]['end']:g} ({row[k]['growth']:+g})" for k in BOUNDS]
        lines.append(f"{label:<16}{cells[0]:>12}{cells[1]:>12}{cells[2]:>14}")
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
