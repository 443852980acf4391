"""`aios bench`: how fast the real system starts and answers, measured from outside.

Starts `aios start --headless --ports auto` with a throw-away state folder (the
apps and config given), times the moment `ready` is printed, then sends the same
instruction `--runs` times and opens its app as often, and prints the cold start
and the median / 90th percentile of each. The system is stopped afterwards.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from urllib.parse import parse_qs, urlsplit

__all__ = ["run_bench"]


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _line(label: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return (
        f"{label:<28} median {statistics.median(ms):7.1f} ms   "
        f"p90 {_percentile(ms, 0.9):7.1f} ms   n={len(ms)}"
    )


def run_bench(args: argparse.Namespace) -> int:
    from .clients import http_json

    with tempfile.TemporaryDirectory(prefix="aios-bench-") as state:
        started = time.monotonic()
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "controller", "start", "--headless",
                "--ports", "auto", "--state-dir", state,
                "--apps-dir", args.apps_dir, "--config", args.config,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().decode().strip()
            cold = time.monotonic() - started
            if not line.startswith("ready "):
                print(f"aios bench: the system did not start ({line!r})", file=sys.stderr)
                return 1
            parts = urlsplit(line.split(" ", 1)[1])
            base = f"{parts.scheme}://{parts.netloc}"
            token = parse_qs(parts.query)["token"][0]
            apps = http_json("GET", base + "/api/apps", token=token).body or []
            running = sum(1 for a in apps if a.get("status") == "running")
            said, opened = [], []
            body = {"text": args.text}
            first = http_json("POST", base + "/api/instruction", body, token=token)
            tasks = (first.body or {}).get("tasks") or []
            app_id = tasks[0]["app_id"] if tasks else None
            for _ in range(args.runs):
                t0 = time.monotonic()
                http_json("POST", base + "/api/instruction", body, token=token, timeout=60)
                said.append(time.monotonic() - t0)
                if app_id:
                    t0 = time.monotonic()
                    http_json("POST", f"{base}/api/apps/{app_id}/open", {}, token=token)
                    opened.append(time.monotonic() - t0)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
    print(f"{'cold start to ready':<28} {cold * 1000:7.1f} ms   ({running} apps running)")
    print(_line(f"instruction → {app_id or 'no app'}", said))
    if opened:
        print(_line(f"open {app_id}", opened))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help="measure cold start and answer latency")
    bench.add_argument("--apps-dir", default="apps")
    bench.add_argument("--config", default="config.json")
    bench.add_argument("--runs", type=int, default=20)
    bench.add_argument("--text", default="跟我打个招呼")
    bench.set_defaults(func=run_bench)
