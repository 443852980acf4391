"""`parallel_steps_ratio`: two slow concurrency-safe steps of one plan over one such step.

The bench starts a loopback-only HTTP server whose `GET /slow` answers after 200 ms
(at most `threads` requests at once, stopped when the figure is taken) and an
in-process `ExecutorToolbox` allowed to reach 127.0.0.1; it times a plan of one
`http_request` to it and a plan of two, `samples` times each, and answers the ratio
of the medians (1.0: the two ran fully side by side; 2.0: one after the other).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["SLOW_S", "parallel_steps_ratio"]

SLOW_S = 0.2


def _slow_server(threads: int = 4) -> Any:
    from flask import Flask

    from aios_runtime.serving import start_server

    app = Flask("bench-slow")

    @app.get("/slow")
    def slow() -> Any:
        time.sleep(SLOW_S)
        return {"ok": True}

    return start_server(app, 0, threads=threads)


def parallel_steps_ratio(samples: int = 3) -> tuple[float, dict[str, Any]]:
    """The ratio, and the medians behind it (ms)."""
    from aios_protocol.messages import Step
    from aios_runtime.settings import Settings
    from executor.registry import AppRecord, AppRegistry
    from executor.toolbox import ExecutorToolbox

    settings = Settings.model_validate(
        {"tool_sandbox": {"http_allow_private_hosts": ["127.0.0.1"]}}
    )
    server = _slow_server()
    with tempfile.TemporaryDirectory(prefix="aios-bench-parallel-") as tmp:
        root = Path(tmp)
        registry = AppRegistry("bench-master-token-0123456789")
        app = AppRecord(app_id="bench_parallel", workdir=root / "work", token="t" * 24)
        app.workdir.mkdir()
        registry.register(app)
        toolbox = ExecutorToolbox(settings, registry, root / "state")
        url = f"{server.url}/slow"
        args = {"url": url}
        one = [Step(step_id=1, tool="http_request", args=args)]
        two = [
            Step(step_id=1, tool="http_request", args=args),
            Step(step_id=2, tool="http_request", args=args),
        ]
        try:
            toolbox.run(app, one)  # warm-up: imports, connection set-up
            times: dict[str, list[float]] = {"one": [], "two": []}
            for _ in range(samples):
                for label, plan in (("one", one), ("two", two)):
                    started = time.monotonic()
                    results = toolbox.run(app, plan)
                    elapsed = time.monotonic() - started
                    if any(r.status != "ok" for r in results.values()):
                        raise RuntimeError(f"the slow steps failed: {results}")
                    times[label].append(elapsed)
        finally:
            toolbox.shutdown()
            server.stop()
    one_ms = statistics.median(times["one"]) * 1000
    two_ms = statistics.median(times["two"]) * 1000
    return two_ms / one_ms, {
        "one_step_ms": round(one_ms, 1),
        "two_steps_ms": round(two_ms, 1),
    }
