"""The whole system under `aios bench`: launched, timed, weighed and loaded.

`prepare_folder` makes the benchmark's throw-away world: copies of the shipped
apps (with and without the probe app of `bench_apps/`), a config with the LLM
switched off, and state folders; `add_synthetic_apps` installs a hundred more
(copies of the probe app with made-up manifests) for the figures at scale.
`RunningSystem` is one `aios start --headless --ports auto` in that world. Apps
start on first use, so its cold start is spawn to *the desktop usable*: the
`ready` line printed, the desktop page served, and the controller's and the
executor's health answered (installed apps are idle, not started); its resident
memory is the controller's and all its children's. `warm` starts apps by opening
them (what a first click does); `first_calls_ms` times the first instruction to
each of several idle apps (start included). `pipeline_latency` interleaves
floor hops and probe instructions so both see the same machine load;
`concurrency` runs many clients at once; `executor_steps_per_s` drives a
stand-alone executor with cheap step plans. Every process started here is stopped
by its owner's `stop` / context manager.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from aios_runtime.config_keys import RENAMED
from aios_runtime.settings import LLM_ENV
from bench.hop import HopFailed, KeepAliveClient, stop_process_group

__all__ = [
    "COLD_WORD",
    "PROBE_APP_ID",
    "PROBE_TEXT",
    "BenchFolder",
    "LoadResult",
    "RunningSystem",
    "add_synthetic_apps",
    "concurrency",
    "first_calls_ms",
    "executor_steps_per_s",
    "pipeline_latency",
    "prepare_folder",
]

REPO_ROOT = Path(__file__).resolve().parent.parent
PROBE_APP = Path(__file__).resolve().parent / "apps" / "bench_probe"
PROBE_APP_ID = "bench_probe"
PROBE_TEXT = "bench probe"
# the one keyword of synthetic app i: "coldprobe007" names synthetic_007 only
COLD_WORD = "coldprobe{:03d}"
# never handed to the system under test: no model, no user state, no fixed token
_DROPPED_ENV = (
    *LLM_ENV,
    "AIOS_STATE_DIR",
    "AIOS_TOKEN",
)


@dataclass
class BenchFolder:
    root: Path
    shipped_apps: Path  # copies of the shipped apps
    probe_apps: Path  # the same plus the probe app
    config: Path

    def state_dir(self, name: str) -> Path:
        path = self.root / "state" / name
        path.mkdir(parents=True, exist_ok=True)
        return path


def _copy_app(source: Path, target: Path) -> None:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def prepare_folder(root: Path, apps_dir: Path, config: Path | None) -> BenchFolder:
    """Copies of the apps and the config under `root` (the user's files stay untouched)."""
    import compileall

    folder = BenchFolder(root, root / "apps", root / "apps_probe", root / "config.json")
    for target in (folder.shipped_apps, folder.probe_apps):
        target.mkdir(parents=True)
        for app in sorted(Path(apps_dir).iterdir()):
            if (app / "manifest.json").is_file() and not app.name.startswith((".", "_")):
                _copy_app(app, target / app.name)
    _copy_app(PROBE_APP, folder.probe_apps / PROBE_APP_ID)
    for target in (folder.shipped_apps, folder.probe_apps):
        compileall.compile_dir(str(target), quiet=2)  # as after any earlier run
    settings: dict[str, Any] = {}
    if config is not None and Path(config).is_file():
        settings = json.loads(Path(config).read_text(encoding="utf-8"))
    for old in RENAMED:  # the old names of the `llm` keys
        settings.pop(old, None)
    found = settings.get("llm")
    llm: dict[str, Any] = found if isinstance(found, dict) else {}
    # routing without a model: no key, and the default server, which needs one
    settings["llm"] = {
        key: v for key, v in llm.items() if key not in ("api_key", "base_url")
    }
    folder.config.write_text(json.dumps(settings, ensure_ascii=False), encoding="utf-8")
    return folder


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = f"{REPO_ROOT}{os.pathsep}{path}" if path else str(REPO_ROOT)
    return env


def _read_line(proc: subprocess.Popen, timeout: float) -> str:
    """The first line `proc` prints on stdout ('' if it exits or `timeout` passes)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            return ""
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                return ""
            data += chunk
    return data.split(b"\n", 1)[0].decode("utf-8", "replace").strip()


class RunningSystem:
    """One `aios start --headless --ports auto` in the benchmark's folder."""

    def __init__(self, apps_dir: Path, config: Path, state_dir: Path):
        self.apps_dir = apps_dir
        self.config = config
        self.state_dir = state_dir
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.token = ""

    def start(self, timeout: float = 60.0) -> float:
        """Start it; seconds from spawn until the desktop is usable: the `ready` line,
        then the desktop page and `/api/health` with the executor `running` (apps
        start on first use; a broken one fails the start)."""
        started = time.monotonic()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "aios",
                "start",
                "--headless",
                "--ports",
                "auto",
                "--state-dir",
                str(self.state_dir),
                "--apps-dir",
                str(self.apps_dir),
                "--config",
                str(self.config),
            ],
            cwd=REPO_ROOT,
            env=_environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        line = _read_line(self.proc, timeout)
        if not line.startswith("ready "):
            self.stop()
            raise RuntimeError(f"aios start did not get ready ({line!r})")
        parts = urlsplit(line.split(" ", 1)[1])
        self.url = f"{parts.scheme}://{parts.netloc}"
        self.token = parse_qs(parts.query)["token"][0]
        client = self.client()
        try:
            while True:
                page, _ = client.get("/")
                status, health = client.get("/api/health")
                usable = page == 200 and status == 200 and isinstance(health, dict)
                if usable and health.get("executor") == "running":
                    took = time.monotonic() - started
                    break
                if time.monotonic() - started > timeout:
                    raise RuntimeError(f"the desktop is not usable ({status} {health})")
                time.sleep(0.01)
            status, apps = client.get("/api/apps")
            failed = [a for a in apps or [] if a.get("status") == "failed"]
            if failed:
                raise RuntimeError(
                    f"app {failed[0]['id']} failed: {failed[0].get('error')}"
                )
            return took
        finally:
            client.close()

    def warm(self, app_ids: list[str]) -> None:
        """Start the apps by opening each (the first open waits for its start)."""
        client = self.client()
        try:
            for app_id in app_ids:
                status, reply = client.post(f"/api/apps/{app_id}/open", {})
                if status != 200:
                    raise RuntimeError(f"opening {app_id} failed (HTTP {status}: {reply})")
        finally:
            client.close()

    def client(self, timeout: float = 60.0) -> KeepAliveClient:
        return KeepAliveClient(self.url, self.token, timeout=timeout)

    def settled_memory(self) -> dict[str, dict[str, float]]:
        """The running tree's memory by label (`bench.apps_open.tree_memory`), a second
        after the last call, each app named as the controller lists it."""
        from bench.apps_open import tree_memory

        time.sleep(1.0)
        client = self.client()
        try:
            _, apps = client.get("/api/apps")
        finally:
            client.close()
        assert self.proc is not None
        return tree_memory(self.proc.pid, apps or [])

    def rss_mb(self) -> dict[str, float]:
        """Resident memory (MiB) of the controller and of each process below it."""
        import psutil

        assert self.proc is not None
        root = psutil.Process(self.proc.pid)
        sizes: dict[str, float] = {}
        for proc in [root, *root.children(recursive=True)]:
            try:
                name = _process_label(proc)
                sizes[name] = sizes.get(name, 0.0) + proc.memory_info().rss / 2**20
            except psutil.Error:
                continue
        return sizes

    def stop(self) -> None:
        if self.proc is not None:
            stop_process_group(self.proc, grace=15.0)
            self.proc = None


def _process_label(proc: Any) -> str:
    """'controller', 'executor' or the app folder's name, for the memory breakdown."""
    args = proc.cmdline()
    if "aios" in args and "start" in args:
        return "controller"
    if "executor" in args:
        return "executor"
    for arg in args:
        if arg.endswith(".py"):
            return Path(arg).parent.name
    return f"pid {proc.pid}"


def add_synthetic_apps(target: Path, count: int) -> list[str]:
    """`count` more apps in `target`: copies of the probe app, each with the manifest
    of `bench.routing.synthetic_profiles` plus its own keyword (`COLD_WORD`)."""
    from bench.routing import synthetic_profiles

    ids = []
    for i, profile in enumerate(synthetic_profiles(count)):
        folder = target / profile.app_id
        _copy_app(PROBE_APP, folder)
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        manifest.update(
            name=profile.name,
            description=profile.description,
            keywords=[*profile.keywords, COLD_WORD.format(i)],
            examples=list(profile.examples),
        )
        (folder / "manifest.json").write_text(
            json.dumps(manifest, ensure_ascii=False), encoding="utf-8"
        )
        ids.append(profile.app_id)
    return ids


def first_calls_ms(system: RunningSystem, indexes: list[int]) -> list[float]:
    """Milliseconds of the first instruction to each idle synthetic app (`COLD_WORD`):
    routing, the app's start (spawn, health, registration) and its two steps."""
    client = system.client()
    took = []
    try:
        for i in indexes:
            started = time.perf_counter()
            status, answer = client.post("/api/instruction", {"text": COLD_WORD.format(i)})
            elapsed = time.perf_counter() - started
            error = probe_error(status, answer, app_id=f"synthetic_{i:03d}")
            if error:
                raise RuntimeError(f"the first call to synthetic_{i:03d} failed: {error}")
            took.append(elapsed * 1000)
    finally:
        client.close()
    return took


def probe_error(status: int, answer: Any, app_id: str = PROBE_APP_ID) -> str | None:
    """Why an `/api/instruction` answer is not the probe's expected result, or None."""
    if status != 200 or not isinstance(answer, dict):
        return f"HTTP {status}"
    tasks = answer.get("tasks") or []
    if len(tasks) != 1 or tasks[0].get("app_id") != app_id:
        return f"routed to {[t.get('app_id') for t in tasks]}"
    task = tasks[0]
    if task.get("status") != "done":
        error = (task.get("result") or {}).get("data") or {}
        return f"task {task.get('status')}: {error.get('code') or error}"
    if answer.get("llm_calls"):
        return "routed by the LLM"
    return None


def pipeline_latency(
    system: KeepAliveClient, floor: KeepAliveClient, samples: int, warmup: int
) -> tuple[list[float], list[float]]:
    """(floor hop seconds, probe instruction seconds), measured alternately."""
    body: dict[str, Any] = {"text": PROBE_TEXT}
    floors: list[float] = []
    pipeline: list[float] = []
    for i in range(warmup + samples):
        started = time.perf_counter()
        floor.post("/", body)
        hop = time.perf_counter() - started
        started = time.perf_counter()
        status, answer = system.post("/api/instruction", body)
        took = time.perf_counter() - started
        error = probe_error(status, answer)
        if error:
            raise RuntimeError(f"the probe instruction failed: {error}")
        body["session_id"] = answer["session_id"]  # one conversation, as the desktop
        if i >= warmup:
            floors.append(hop)
            pipeline.append(took)
    return floors, pipeline


@dataclass
class LoadResult:
    requests: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)


def concurrency(system: RunningSystem, clients: int, seconds: float) -> LoadResult:
    """`clients` threads, each its own connection and session, sending probe
    instructions back to back for `seconds`; every failed answer is an error."""
    result = LoadResult()
    lock = threading.Lock()
    go = threading.Barrier(clients + 1)
    deadline = [0.0]

    def client_loop() -> None:
        client = system.client(timeout=60.0)
        body: dict[str, Any] = {"text": PROBE_TEXT}
        go.wait()
        try:
            while time.monotonic() < deadline[0]:
                started = time.perf_counter()
                try:
                    status, answer = client.post("/api/instruction", body)
                    error = probe_error(status, answer)
                except HopFailed as exc:
                    error = str(exc)
                took = time.perf_counter() - started
                with lock:
                    result.requests += 1
                    result.latencies.append(took)
                    if error:
                        result.errors += 1
                        if len(result.examples) < 5:
                            result.examples.append(error)
                if not error:
                    body["session_id"] = answer["session_id"]
        finally:
            client.close()

    threads = [threading.Thread(target=client_loop, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    deadline[0] = time.monotonic() + seconds
    go.wait()
    for thread in threads:
        thread.join(seconds + 120)
    return result


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def executor_steps_per_s(folder: BenchFolder, seconds: float, batch: int = 10) -> float:
    """Cheap steps (cache_set / cache_get / file_read) per second through a stand-alone
    executor's `POST /run`, `batch` steps per plan, plans back to back."""
    workdir = folder.root / "executor_work"
    workdir.mkdir(exist_ok=True)
    (workdir / "probe.txt").write_text("bench probe payload\n", encoding="utf-8")
    master = secrets.token_urlsafe(24)
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "executor",
            "--port",
            str(port),
            "--config",
            str(folder.config),
            "--state-dir",
            str(folder.state_dir("executor")),
        ],
        cwd=REPO_ROOT,
        env={**_environment(), "AIOS_TOKEN": master},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    client = KeepAliveClient(f"http://127.0.0.1:{port}", master, timeout=30)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if client.get("/health")[0] == 200:
                    break
            except HopFailed:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the executor did not start") from None
                time.sleep(0.02)
        registration = {
            "app_id": PROBE_APP_ID,
            "workdir": str(workdir),
            "token": master[::-1],
        }
        status, _ = client.request("PUT", f"/apps/{PROBE_APP_ID}", registration)
        if status != 200:
            raise RuntimeError(f"registering with the executor failed (HTTP {status})")
        tools = [
            ("cache_set", {"key": "probe", "value": {"n": 1}, "ttl": 60}),
            ("cache_get", {"key": "probe"}),
            ("file_read", {"path": "probe.txt"}),
        ]
        steps = [
            {"step_id": i + 1, "tool": tools[i % 3][0], "args": tools[i % 3][1]}
            for i in range(batch)
        ]
        plan = {"steps": steps, "app_id": PROBE_APP_ID, "session_id": "sess_bench"}
        client.post("/run", plan)  # warm-up: lazy imports of the tools
        done = 0
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            status, answer = client.post("/run", plan)
            results = (answer or {}).get("tool_results") or {}
            done += sum(1 for r in results.values() if r.get("status") == "ok")
        return done / (time.perf_counter() - started)
    finally:
        client.close()
        stop_process_group(proc)
