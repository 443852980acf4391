"""`aios bench`: every speed and memory goal of the system, measured in one run.

    aios bench [--quick] [--json] [--apps-dir D] [--config F] …

One run measures, on this machine and under its current load (so the ratios
hold even when the machine is busy): the loopback floor (`bench_hop`), the
deterministic router and the share of instructions that need no model
(`bench_routing`), a stand-alone executor's step rate, cold starts and idle
memory of `aios start --headless` with the shipped apps, what one more running app
adds, the latency of a probe instruction through the whole pipeline against the
floor (the probe app warmed up first), and many clients at once (`bench_system`);
then the same system with 100 synthetic apps installed: its cold start, its idle
memory and the first call to an app that is not running yet. Apps start on first
use: a cold start lasts until the desktop is usable and the controller and the
executor answer (`bench.system.RunningSystem.start`), and idle memory is the
system's after launch, its apps installed but not started (`meta.rss_all_shipped_
running_mb` is the same system with every shipped app opened). Everything runs in
a temporary folder on ephemeral ports and every process started is stopped at the
end.

`--json` prints exactly one JSON object on stdout (the `KEYS` below plus `meta`);
otherwise a table shows each figure beside its goal with ✓ or ✗. Progress goes to
stderr. `--quick` is a short smoke run (one cold start, a one-second load test).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from aios_runtime import shipped

__all__ = ["GOALS", "KEYS", "add_parser", "render_table", "run_bench"]


@dataclass(frozen=True)
class Goal:
    unit: str
    op: str = ""  # "<=", ">=" or "" (reported, no goal)
    target: float = 0.0
    digits: int = 2

    def met(self, value: float | None) -> bool | None:
        if not self.op or value is None:
            return None
        return value <= self.target if self.op == "<=" else value >= self.target


GOALS: dict[str, Goal] = {
    "hop_floor_ms": Goal("ms", digits=3),
    "pipeline_p50_ms": Goal("ms"),
    "pipeline_p99_ms": Goal("ms"),
    "pipeline_ratio": Goal("× floor", "<=", 6),
    "cold_start_s": Goal("s", "<=", 1.5),
    "rss_total_mb": Goal("MiB", "<=", 220, 1),
    # 35 MiB on the removed hand-written stack, plus what Flask costs an app (~14 MiB,
    # docs/PERFORMANCE.md "Memory"); idle apps cost nothing since they start on first use
    "rss_per_app_mb": Goal("MiB", "<=", 50, 1),
    # 100 synthetic apps installed beside the shipped ones, idle until first use
    "cold_start_s_100_installed": Goal("s", "<=", 2),
    "rss_total_mb_100_installed": Goal("MiB", "<=", 300, 1),
    "first_call_ms_cold_app": Goal("ms", "<=", 1000, 0),
    "route_p50_ms_4": Goal("ms", "<=", 1, 3),
    "route_p50_ms_100": Goal("ms", "<=", 5, 3),
    "executor_steps_per_s": Goal("steps/s", ">=", 500, 0),
    "concurrency_errors": Goal("errors", "<=", 0, 0),
    "concurrency_p99_ms": Goal("ms", digits=1),
    "zero_llm_share": Goal("share", ">=", 0.8),
    "first_chunk_ms": Goal("ms"),
    # two 200 ms concurrency-safe steps of one plan over one (bench/parallel.py)
    "parallel_steps_ratio": Goal("× one step", "<=", 1.3),
    # opening apps (bench/apps_open.py): the first open of a stopped app, median over
    # the shipped apps, through the API and from a taskbar click in Chromium
    "first_open_ms_stopped_app": Goal("ms", "<=", 100, 0),
    "click_to_content_ms_stopped_app": Goal("ms", "<=", 200, 0),
    # the slowest shipped app's median open once it runs
    "warm_open_ms_slowest_app": Goal("ms", "<=", 20, 1),
    # every shipped app running, the whole process tree: the goal is on PSS (shared
    # pages counted once, what the machine pays); RSS counts them once per process
    "pss_seven_apps_mb": Goal("MiB", "<=", 250, 1),
    "rss_seven_apps_mb": Goal("MiB", digits=1),
    # what one more running app holds alone (USS of its processes)
    "uss_one_more_app_mb": Goal("MiB", "<=", 12, 1),
    # the hello instruction over `GET /api/health`, medians of the same run
    "hello_health_ratio": Goal("× health", "<=", 6),
    "enter_to_reply_ms_warm_hello": Goal("ms", "<=", 25, 1),
    # twenty users, each with three apps open in processes of their own
    # (bench/users.py): the whole tree's PSS, and each user's first instruction to
    # an app whose process for them does not run yet
    "pss_twenty_users_mb": Goal("MiB", "<=", 600, 1),
    "first_call_ms_new_user": Goal("ms", "<=", 150, 0),
}
KEYS = tuple(GOALS)
_WIDTH = max(len(key) for key in KEYS)  # of the table's first column


@dataclass(frozen=True)
class Plan:
    cold_starts: int
    samples: int
    warmup: int
    clients: int
    seconds: float
    routing_rounds: int
    executor_seconds: float
    cold_calls: int = 3  # first calls to idle apps, one app each
    # open every shipped app once for `meta.rss_all_shipped_running_mb` (a record,
    # no goal: the quick smoke run leaves it out)
    all_apps_running: bool = True
    warm_opens: int = 5  # warm opens of each shipped app
    hello_samples: int = 300  # hello instructions (and health hops) measured
    enters: int = 20  # Enter → reply in Chromium, after three to warm up
    users: int = 20  # users with three apps open each (bench/users.py)


QUICK = Plan(
    1,
    10,
    2,
    50,
    1.0,
    1,
    0.25,
    1,
    all_apps_running=False,
    warm_opens=1,
    hello_samples=10,
    enters=2,
    users=2,
)
FULL = Plan(5, 300, 30, 50, 30.0, 10, 3.0, 9)


def _progress(text: str) -> None:
    print(f"aios bench: {text}", file=sys.stderr, flush=True)


def _percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(round(share * len(ordered) + 0.5))))
    return ordered[rank - 1]


def _timed(label: str, step: Callable[[], Any]) -> Any:
    _progress(f"{label}…")
    started = time.monotonic()
    value = step()
    _progress(f"{label}: done in {time.monotonic() - started:.1f} s")
    return value


def _all_shipped_running_mb(system: Any, shipped_apps: Path) -> float | str:
    """For the record only (what the old start-everything cost): the running
    system's memory once every shipped app is opened, or why it was not measured."""
    shipped_ids = sorted(p.name for p in shipped_apps.iterdir() if p.is_dir())
    try:
        _timed("open every shipped app", partial(system.warm, shipped_ids))
    except RuntimeError as exc:
        return f"not measured: {exc}"
    time.sleep(1.0)
    return round(sum(system.rss_mb().values()), 1)


def measure(plan: Plan, args: argparse.Namespace, meta: dict[str, Any]) -> dict[str, Any]:
    """Every figure of `KEYS`, in one run; `meta` receives the details behind them."""
    from bench.hop import EchoServer
    from bench.system import executor_steps_per_s, prepare_folder

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="aios-bench-") as tmp, EchoServer() as echo:
        folder = prepare_folder(Path(tmp), Path(args.apps_dir), Path(args.config))
        _routing(plan, folder, Path(args.routing_set), out, meta)
        out["executor_steps_per_s"] = _timed(
            "executor steps", lambda: executor_steps_per_s(folder, plan.executor_seconds)
        )
        from bench.parallel import parallel_steps_ratio

        ratio, meta["parallel_steps"] = _timed("parallel steps", parallel_steps_ratio)
        out["parallel_steps_ratio"] = ratio
        _cold_starts(plan, folder, out, meta)
        _probed(plan, folder, echo, out, meta)
        _opening(plan, folder, out, meta)
        _at_scale(plan, folder, out, meta)
        _many_users(plan, folder, out, meta)
    return out


def _routing(
    plan: Plan, folder: Any, routing_set: Path, out: dict[str, Any], meta: dict[str, Any]
) -> None:
    """The routing figures: its median time with the shipped apps and with 100 more,
    and the share of instructions routed without the model."""
    from bench.routing import (
        load_routing_texts,
        route_p50_ms,
        shipped_profiles,
        synthetic_profiles,
        zero_llm_share,
    )

    texts = load_routing_texts(routing_set)
    shipped = shipped_profiles(folder.shipped_apps)
    crowded = shipped + synthetic_profiles(100)
    rounds = plan.routing_rounds
    out["route_p50_ms_4"] = _timed(
        "routing, shipped apps", lambda: route_p50_ms(shipped, texts, rounds)
    )
    out["route_p50_ms_100"] = _timed(
        "routing, 100 more apps", lambda: route_p50_ms(crowded, texts, rounds)
    )
    share, calls = _timed("zero-LLM share", lambda: zero_llm_share(shipped, texts))
    out["zero_llm_share"] = share
    meta["routing"] = {"instructions": len(texts), "fake_llm_calls": calls}


def _cold_starts(
    plan: Plan, folder: Any, out: dict[str, Any], meta: dict[str, Any]
) -> None:
    """The system's cold starts, and its memory after the last one (idle)."""
    from bench.system import RunningSystem

    colds: list[float] = []
    rss_4: dict[str, float] = {}
    for i in range(plan.cold_starts):
        system = RunningSystem(
            folder.shipped_apps, folder.config, folder.state_dir(f"cold{i}")
        )
        try:
            colds.append(_timed(f"cold start {i + 1}/{plan.cold_starts}", system.start))
            if i == plan.cold_starts - 1:
                time.sleep(1.0)  # idle: let start-up work settle
                rss_4 = system.rss_mb()
                meta["rss_all_shipped_running_mb"] = (
                    _all_shipped_running_mb(system, folder.shipped_apps)
                    if plan.all_apps_running
                    else "not measured in a quick run"
                )
        finally:
            system.stop()
    out["cold_start_s"] = statistics.median(colds)
    out["rss_total_mb"] = sum(rss_4.values())
    meta["cold_starts_s"] = [round(c, 3) for c in colds]
    meta["rss_mb"] = {k: round(v, 1) for k, v in sorted(rss_4.items())}


def _probed(
    plan: Plan, folder: Any, echo: Any, out: dict[str, Any], meta: dict[str, Any]
) -> None:
    """The figures of a system with the probe app, warm: its memory, the pipeline's
    latency against the hop floor (`echo`), the first chunk of a `/v1` stream, and
    clients at once."""
    from bench.hop import FLOOR_STACK, KeepAliveClient
    from bench.openai_entry import first_chunk_latency
    from bench.system import PROBE_APP_ID, PROBE_TEXT, RunningSystem, concurrency

    system = RunningSystem(folder.probe_apps, folder.config, folder.state_dir("probe"))
    try:
        _timed("start with the probe app", system.start)
        system.warm([PROBE_APP_ID])  # the latency figures are of a warm app
        time.sleep(1.0)
        rss_5 = system.rss_mb()
        out["rss_per_app_mb"] = sum(rss_5.values()) - out["rss_total_mb"]
        meta["rss_probe_app_mb"] = round(rss_5.get("bench_probe", 0.0), 1)
        _pipeline(plan, system, KeepAliveClient(echo.url, echo.token), out, meta)
        meta["floor_stack"] = FLOOR_STACK

        firsts, wholes = _timed(
            "/v1 first chunk",
            lambda: first_chunk_latency(
                system.url,
                system.token,
                PROBE_APP_ID,
                PROBE_TEXT,
                plan.samples,
                plan.warmup,
            ),
        )
        out["first_chunk_ms"] = statistics.median(firsts) * 1000
        meta["first_chunk"] = {
            "samples": len(firsts),
            "stream_whole_p50_ms": round(statistics.median(wholes) * 1000, 3),
        }

        load = _timed(
            f"{plan.clients} clients for {plan.seconds:g} s",
            lambda: concurrency(system, plan.clients, plan.seconds),
        )
        out["concurrency_errors"] = load.errors
        out["concurrency_p99_ms"] = (
            _percentile(load.latencies, 0.99) * 1000 if load.latencies else None
        )
        meta["concurrency"] = {
            "clients": plan.clients,
            "seconds": plan.seconds,
            "requests": load.requests,
            "per_s": round(load.requests / plan.seconds, 1),
            "error_examples": load.examples,
        }
        meta["rss_after_load_mb"] = round(sum(system.rss_mb().values()), 1)
    finally:
        system.stop()


def _pipeline(
    plan: Plan, system: Any, floor_client: Any, out: dict[str, Any], meta: dict[str, Any]
) -> None:
    """The pipeline's latency, and the hop floor's (`floor_client`) beside it."""
    from bench.system import pipeline_latency

    client = system.client()
    try:
        floors, pipeline = _timed(
            "pipeline latency",
            lambda: pipeline_latency(client, floor_client, plan.samples, plan.warmup),
        )
    finally:
        client.close()
        floor_client.close()
    out["hop_floor_ms"] = statistics.median(floors) * 1000
    out["pipeline_p50_ms"] = statistics.median(pipeline) * 1000
    out["pipeline_p99_ms"] = _percentile(pipeline, 0.99) * 1000
    out["pipeline_ratio"] = out["pipeline_p50_ms"] / out["hop_floor_ms"]
    meta["pipeline_samples"] = len(pipeline)


def _opening(plan: Plan, folder: Any, out: dict[str, Any], meta: dict[str, Any]) -> None:
    """The figures of opening apps (`bench.apps_open`): one system opens every shipped
    app through the API (cold, then warm), weighs the tree and times hello against
    the health hop; another, with the probe app beside them, is driven in Chromium
    and then weighs the probe app, opened after all the others."""
    from bench.apps_open import browser_times, hello_ratio, open_times
    from bench.system import PROBE_APP_ID, RunningSystem

    shipped = sorted(p.name for p in folder.shipped_apps.iterdir() if p.is_dir())
    system = RunningSystem(folder.shipped_apps, folder.config, folder.state_dir("open"))
    try:
        _timed("start for the opens", system.start)
        time.sleep(1.0)  # idle, as a person finds it
        client = system.client()
        try:
            cold, warm = _timed(
                "open each shipped app",
                lambda: open_times(client, shipped, plan.warm_opens),
            )
            out["first_open_ms_stopped_app"] = statistics.median(cold.values())
            out["warm_open_ms_slowest_app"] = max(warm.values())
            meta["first_open_ms"] = {k: round(v, 1) for k, v in cold.items()}
            meta["warm_open_ms"] = {k: round(v, 1) for k, v in warm.items()}
            sizes = system.settled_memory()
            out["pss_seven_apps_mb"] = sum(r["pss"] for r in sizes.values())
            out["rss_seven_apps_mb"] = sum(r["rss"] for r in sizes.values())
            meta["memory_seven_apps_mb"] = {
                k: {m: round(v, 1) for m, v in r.items()} for k, r in sorted(sizes.items())
            }
            hello, health, ratio = _timed(
                "hello against health",
                lambda: hello_ratio(client, plan.hello_samples, plan.warmup),
            )
            out["hello_health_ratio"] = ratio
            meta["hello_p50_ms"], meta["health_p50_ms"] = round(hello, 3), round(health, 3)
        finally:
            client.close()
    finally:
        system.stop()

    system = RunningSystem(folder.probe_apps, folder.config, folder.state_dir("browser"))
    try:
        _timed("start for the browser", system.start)
        time.sleep(1.0)
        try:
            clicks, replies = _timed(
                "Chromium",
                lambda: browser_times(system.url, system.token, shipped, plan.enters),
            )
            out["click_to_content_ms_stopped_app"] = statistics.median(clicks.values())
            out["enter_to_reply_ms_warm_hello"] = statistics.median(replies)
            meta["click_to_content_ms"] = {k: round(v, 1) for k, v in clicks.items()}
            meta["enter_to_reply_ms"] = [round(r, 1) for r in replies]
        except RuntimeError as exc:
            meta["browser"] = f"not measured: {exc}"
        system.warm(shipped)
        system.warm([PROBE_APP_ID])
        sizes = system.settled_memory()
        probe = sizes.get(PROBE_APP_ID)
        out["uss_one_more_app_mb"] = probe["uss"] if probe else None
        meta["memory_eight_apps_mb"] = {
            k: {m: round(v, 1) for m, v in r.items()} for k, r in sorted(sizes.items())
        }
    finally:
        system.stop()


def _at_scale(plan: Plan, folder: Any, out: dict[str, Any], meta: dict[str, Any]) -> None:
    """The figures with 100 synthetic apps installed beside the shipped ones."""
    from bench.system import RunningSystem, add_synthetic_apps, first_calls_ms

    crowded = folder.root / "apps_100"
    shutil.copytree(folder.shipped_apps, crowded)
    ids = add_synthetic_apps(crowded, 100)
    system = RunningSystem(crowded, folder.config, folder.state_dir("crowded"))
    try:
        cold = _timed("cold start, 100 installed", system.start)
        out["cold_start_s_100_installed"] = cold
        time.sleep(1.0)
        out["rss_total_mb_100_installed"] = sum(system.rss_mb().values())
        # apps far apart in the list, each started by its first call
        step = max(1, len(ids) // max(plan.cold_calls, 1))
        picks = list(range(0, len(ids), step))[: plan.cold_calls]
        firsts = _timed("first calls to idle apps", lambda: first_calls_ms(system, picks))
        out["first_call_ms_cold_app"] = statistics.median(firsts)
        meta["first_calls_ms"] = [round(f, 1) for f in firsts]
    finally:
        system.stop()


def _many_users(plan: Plan, folder: Any, out: dict[str, Any], meta: dict[str, Any]) -> None:
    """The figures of many users at once (`bench.users`)."""
    from bench.users import APPS, many_users

    firsts, sizes, processes = _timed(
        f"{plan.users} users with {len(APPS)} apps each",
        lambda: many_users(
            folder.probe_apps, folder.config, folder.state_dir("users"), plan.users
        ),
    )
    out["first_call_ms_new_user"] = statistics.median(firsts)
    out["pss_twenty_users_mb"] = sum(r["pss"] for r in sizes.values())
    meta["many_users"] = {
        "users": plan.users,
        "apps": [app_id for app_id, _ in APPS],
        "processes": processes,
        "first_call_ms_p90": round(_percentile(firsts, 0.9), 1),
        "rss_mb": round(sum(r["rss"] for r in sizes.values()), 1),
        "memory_mb": {
            k: {m: round(v, 1) for m, v in r.items()} for k, r in sorted(sizes.items())
        },
    }


def render_table(results: dict[str, Any], meta: dict[str, Any]) -> str:
    """The results as a table: figure, goal, ✓ / ✗ (— where there is no goal)."""
    lines = [
        f"Triton AIOS benchmark ({meta.get('mode')}, {meta.get('cores')} cores, "
        f"load {meta.get('load_avg')})",
        f"{'figure':<{_WIDTH}} {'value':>12}  {'goal':<18} ok",
    ]
    for key in KEYS:
        goal = GOALS[key]
        value = results.get(key)
        shown = "n/a" if value is None else f"{value:.{goal.digits}f}"
        target = f"{goal.op} {goal.target:g} {goal.unit}" if goal.op else goal.unit
        met = goal.met(value)
        mark = "—" if met is None else ("✓" if met else "✗")
        lines.append(f"{key:<{_WIDTH}} {shown:>12}  {target:<18} {mark}")
    return "\n".join(lines)


def run_bench(args: argparse.Namespace) -> int:
    if args.soak:
        from bench.soak import run_soak

        return run_soak(args)
    plan = QUICK if args.quick else FULL
    if args.cold_starts:
        plan = _replace(plan, cold_starts=args.cold_starts)
    if args.seconds:
        plan = _replace(plan, seconds=args.seconds)

    def on_term(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # let the clean-up finish
        raise SystemExit(128 + signum)  # unwinds: every started process is stopped

    signal.signal(signal.SIGTERM, on_term)
    meta: dict[str, Any] = {
        "mode": "quick" if args.quick else "full",
        "cores": os.cpu_count(),
        "load_avg": round(os.getloadavg()[0], 2),
    }
    started = time.monotonic()
    try:
        results = measure(plan, args, meta)
    except Exception as exc:
        _progress(f"failed: {type(exc).__name__}: {exc}")
        if args.json:  # still one object, so a caller can tell what is missing
            meta["error"] = f"{type(exc).__name__}: {exc}"
            print(json.dumps({**dict.fromkeys(KEYS), "meta": meta}, ensure_ascii=False))
        return 1
    meta["seconds"] = round(time.monotonic() - started, 1)
    results = {key: results.get(key) for key in KEYS}
    meta["goals_met"] = {k: GOALS[k].met(v) for k, v in results.items() if GOALS[k].op}
    if args.json:
        print(json.dumps({**results, "meta": meta}, ensure_ascii=False))
    else:
        print(render_table(results, meta))
    return 0


def _replace(plan: Plan, **changes: Any) -> Plan:
    from dataclasses import replace

    return replace(plan, **changes)


def add_parser(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help="measure speed and memory against their goals")
    bench.add_argument("--quick", action="store_true", help="a short smoke run")
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    bench.add_argument("--apps-dir", default=str(shipped.APPS), help="shipped apps")
    bench.add_argument("--config", default=str(shipped.CONFIG))
    bench.add_argument("--routing-set", default=str(shipped.ROUTING_SET))
    bench.add_argument("--cold-starts", type=int, default=0, help="cold starts to time")
    bench.add_argument("--seconds", type=float, default=0, help="length of the load test")
    bench.add_argument(
        "--soak",
        type=float,
        default=0,
        metavar="MINUTES",
        help="instead: a mixed soak; growth of fds, threads, RSS",
    )
    bench.set_defaults(func=run_bench)
