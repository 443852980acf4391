"""Supervision of the executor and the app processes.

The executor and every app run as children in their own process groups
(`processes.spawn_child`). One monitor thread drives a small state machine per
child: `starting` (polled for `/health` every 5 ms) → `registering` (an app's
`GET /manifest` custom tools and its `AppRegistration` sent to the executor) →
`running` (health-checked every `health_interval`). A child that exits, or misses
`max_missed` health checks in a row, is killed with its group at once (SIGKILL),
goes to `restarting` and is started again after a growing back-off; after
`max_restarts` restarts without a stable run it is `failed` — never a tight loop.
An app that answered a real call after a probe was sent is alive: a probe that
queued behind its work and came back late is not a miss. Probes and registrations
run in a small thread pool so one hung app never stalls the others; spawning stays
on the long-lived threads (see `processes`).

Apps start on first use (`controller.apps.lifecycle`): an installed app is `idle`
until a call needs it; that call asks the monitor to start it and waits until it
runs (or fails), and an app without calls for `apps.idle_stop_s` is stopped and
`idle` again (never one whose manifest says `keep_alive`). A user other than the
owner is served by a process of the app for them alone (`controller.apps.served`),
started and stopped the same way. The set of apps may
change while the system runs (`apply_spec`, driven by `controller.apps.watcher`):
an app is added, replaced (its process restarted) or removed. Calls to an app that
crashed or is being restarted are answered at once with `AppUnavailable`
(`app_unavailable`), which the pipeline turns into that task's error view.
"""

from __future__ import annotations

import logging
import secrets
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from aios_protocol.errors import AiosError, AppUnavailable, AppUnreachable, NotFound
from aios_protocol.messages import AppInfo
from aios_runtime.json_client import PeerTimeout
from aios_runtime.settings import AppSandboxSettings, AppsSettings, SupervisorSettings
from aios_runtime.users import OWNER
from controller.apps.confinement import AppConfinement, Confiner, confined_pid
from controller.apps.discovery import AppSpec
from controller.apps.forkserver import ForkServer
from controller.apps.lifecycle import AppLifecycle, AppUse
from controller.apps.ports import PortAssigner, port_is_free
from controller.apps.processes import (
    REPO_ROOT,
    ChildProcess,
    ExecutorLaunch,
    app_environment,
    executor_environment,
    log_size,
    log_tail,
    spawn_child,
    start_child_reaper,
    stop_groups,
)
from controller.apps.served import ServedUsers
from controller.apps.supervision import SupervisedChild, bound_log
from controller.clients import AppClient, ExecutorClient
from controller.pipeline.run import AppTarget
from controller.routing.router import AppProfile

__all__ = ["StartupFailed", "Supervisor", "SupervisorSettings"]

log = logging.getLogger("aios.controller.supervisor")


# how long an app's start waits for the app template to be ready (it imports once
# the executor runs, in about half a second) before starting the app as a new
# interpreter instead
_TEMPLATE_READY_S = 3.0
_FORKED_NOTE = "forked from the app template, confined with the same layout and namespaces"


class StartupFailed(AiosError):
    code = "startup_failed"


class Supervisor(ServedUsers, AppLifecycle):
    def __init__(
        self,
        *,
        specs: list[AppSpec],
        ports: PortAssigner,
        executor: ExecutorLaunch,
        logs_dir: Path,
        controller_url: str,
        app_settings: dict[str, dict[str, Any]] | None = None,
        config: SupervisorSettings | None = None,
        on_status: Callable[[AppInfo], None] | None = None,
        on_ports: Callable[[dict[str, int]], None] | None = None,
        on_registered: Callable[[str, dict[str, Any] | None], None] | None = None,
        # a dict (deprecated): config.json's `app_sandbox` as aios/system.py passes it
        app_sandbox: AppSandboxSettings | None = None,
        apps_dir: Path | None = None,
        apps: AppsSettings | None = None,
        on_removed: Callable[[str], None] | None = None,
    ):
        self.config = config or SupervisorSettings()
        self.apps_settings = apps or AppsSettings()
        self._on_removed = on_removed or (lambda app_id: None)
        self._wake = threading.Event()  # a caller asked for a start: tick now
        self._executor_up = threading.Event()  # the app template starts then
        self.master_token = secrets.token_urlsafe(24)
        self._ports = ports
        self._launch = executor
        self._logs = Path(logs_dir)
        self._controller_url = controller_url
        self._app_settings = app_settings or {}
        self._on_status = on_status or (lambda info: None)
        self._on_ports = on_ports or (lambda ports: None)
        # (app id or "*" for all of them, the app's tool listing when the executor sent it)
        self._on_registered = on_registered or (lambda app_id, listing: None)
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._pool = ThreadPoolExecutor(
            max_workers=max(8, len(specs) + 2), thread_name_prefix="supervise"
        )
        self._monitor = threading.Thread(target=self._loop, name="supervisor", daemon=True)
        self._broken = {s.app_id: s for s in specs if not s.ok}
        self.executor = SupervisedChild(
            "executor", ports.assign("executor"), self._logs / "executor.log"
        )
        self.executor_client = ExecutorClient(self.executor.url, self.master_token)
        self._confiner = Confiner(
            app_sandbox or AppSandboxSettings(),
            state_dir=executor.state_dir,
            config_file=executor.config_path,
            apps_dirs={s.folder.parent for s in specs}
            | ({apps_dir} if apps_dir else set()),
        )
        # the app template apps are forked from (None: each app a new interpreter)
        self._forks = (
            ForkServer(self._logs / "app_template.log")
            if self.apps_settings.fork_from_template
            else None
        )
        self._state_root = Path(executor.state_dir)
        self._apps: dict[str, SupervisedChild] = {}
        # processes of the apps serving one other user each (controller.apps.served)
        self._served: dict[str, SupervisedChild] = {}
        self._use: dict[str, AppUse] = {}
        # child id → (port, target)
        self._targets: dict[str, tuple[int, AppTarget]] = {}
        for spec in specs:
            if spec.ok:
                self._apps[spec.app_id] = self._new_child(spec)
        self._profiles = self._build_profiles()

    # -------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Spawn the executor and the app template, and have the monitor start every
        app started at launch (call from a long-lived thread)."""
        start_child_reaper()
        with self._lock:
            self._spawn(self.executor, first=True)
            if self._forks is not None:
                # the template imports once the executor runs, or at once when apps
                # start at launch (they wait for it)
                if any(self._starts_at_launch(app_id) for app_id in self._apps):
                    self._executor_up.set()
                self._forks.start(after=self._executor_up)
            # the monitor starts them (forked once the template is ready), so this
            # thread goes on composing and serving the API meanwhile
            for child in self._apps.values():
                if self._starts_at_launch(child.child_id):
                    self._use[child.child_id].start_wanted = True
        self._monitor.start()

    def wait_settled(self, timeout: float) -> None:
        """Until the executor runs and every app started at launch was started once
        (healthy or not); apps that start on first use are settled from the outset."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                if self.executor.status == "failed":
                    raise StartupFailed(
                        f"the executor did not start: {self.executor.error}"
                    )
                children = [self.executor, *self._apps.values()]
                if self.executor.status == "running" and all(c.settled for c in children):
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    waiting = [c.child_id for c in children if not c.settled]
                    raise StartupFailed(
                        f"not ready after {timeout:g} s: {', '.join(waiting)}"
                    )
                self._changed.wait(min(left, 0.5))

    def stop(self) -> None:
        """Stop the monitor, then every process group (SIGTERM, grace, SIGKILL)."""
        self._stopping.set()
        self._wake.set()
        if self._monitor.is_alive() and self._monitor is not threading.current_thread():
            self._monitor.join(timeout=2)
        with self._lock:
            children = [*self._served.values(), *self._apps.values(), self.executor]
            procs = [c.proc for c in children if c.proc is not None]
            for child in children:
                child.status = "stopped"
        stop_groups(procs, self.config.stop_grace)
        if self._forks is not None:
            self._forks.stop()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def executor_status(self) -> str:
        return self.executor.public_status()

    def pids(self) -> dict[str, int]:
        with self._lock:
            children = [self.executor, *self._apps.values(), *self._served.values()]
            return {
                c.child_id: c.app_pid or c.proc.pid for c in children if c.proc is not None
            }

    # --------------------------------------------------------- what others ask

    def app_infos(self) -> list[AppInfo]:
        with self._lock:
            rows = [self._info(child) for child in self._apps.values()]
            broken = list(self._broken.values())
        rows.extend(self._broken_info(spec) for spec in broken)
        return sorted(rows, key=lambda r: r.id)

    def profiles(self) -> tuple[AppProfile, ...]:
        """Every startable app, whatever its current status (for the router); the
        same tuple until the apps change, so the router finds its index at once."""
        return self._profiles

    def spec(self, app_id: str) -> AppSpec:
        child = self._apps.get(app_id)
        if child is not None and child.spec is not None:
            return child.spec
        broken = self._broken.get(app_id)
        if broken is not None:
            return broken
        raise NotFound(f"no app {app_id!r}")

    def target(self, app_id: str, user_id: str = OWNER) -> AppTarget:
        """The app ready to be called for `user_id` (the owner: its own process;
        another user: the process serving them alone): an idle process is started
        first and this waits for it (at most `start_timeout`); AppUnavailable when it
        does not run."""
        spec = self.spec(app_id)
        self.ensure_running(app_id, user_id=user_id)
        with self._lock:
            child = self._child_of(app_id, user_id)
            status = child.public_status() if child else "failed"
            ready = child is not None and child.status == "running"
            error = child.error if child else spec.error
        if not ready:
            raise _unavailable(spec.name, app_id, status, error)
        assert child is not None
        key = child.child_id
        # asked twice per task: built again only when the app moved to another port
        known = self._targets.get(key)
        if known is not None and known[0] == child.port:
            return known[1]
        client = AppClient(app_id, child.url, child.token, spec.handle_endpoint)

        def call(body: dict[str, Any], timeout: float) -> dict[str, Any]:
            try:
                with self._in_use(key):
                    answer = client.handle(body, timeout)
                child.answered_at = time.monotonic()
                return answer
            except AppUnreachable as exc:
                proc = child.proc
                if proc is None or proc.poll() is not None:
                    raise _unavailable(spec.name, app_id, "restarting", None) from exc
                if isinstance(exc, PeerTimeout):  # alive but hung: the monitor restarts it
                    child.hung = f"did not answer a call within {timeout:g} s"
                    self._wake.set()
                raise

        workdir = self.workdir_of(child)
        target = AppTarget(
            app_id=app_id, name=spec.name, role=spec.role, workdir=workdir, call=call
        )
        self._targets[key] = (child.port, target)
        return target

    # ----------------------------------------------------------- the monitor

    def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                with self._changed:
                    busy = self._tick()
                    self._changed.notify_all()
            except Exception:  # never let supervision die
                log.exception("supervisor tick failed")
                busy = False
            self._wake.wait(self.config.start_poll if busy else 0.1)
            self._wake.clear()

    def _tick(self) -> bool:
        busy = False
        for child in [self.executor, *self._apps.values(), *self._served.values()]:
            if self._stopping.is_set():
                return False
            busy |= self._step_use(child, time.monotonic())
            busy |= self._step(child, time.monotonic())
            self._publish_if_changed(child)
        return busy

    def _step(self, child: SupervisedChild, now: float) -> bool:
        """Advance one child's state machine; True while it needs fast polling."""
        if child.status in ("failed", "stopped", "idle"):
            return False
        if child.status == "restarting":
            return self._step_restarting(child, now)
        assert child.proc is not None
        code = child.proc.poll()
        if code is not None:
            self._on_death(child, self._exit_reason(child, code))
            return True
        if child.status == "starting":
            return self._step_starting(child, now)
        if child.status == "registering":
            return self._step_registering(child)
        return self._step_running(child, now)

    def _step_restarting(self, child: SupervisedChild, now: float) -> bool:
        if child.job is not None and not child.job.done():
            return True  # its old group is still being stopped
        child.job = None
        if now >= child.next_start:
            self._spawn(child, first=False)
            return True
        return False

    def _step_starting(self, child: SupervisedChild, now: float) -> bool:
        cfg = self.config
        if child.probe is not None and child.probe.done():
            healthy = _future_ok(child.probe)
            child.probe = None
            if healthy:
                self._on_healthy(child, now)
                if child.status == "registering":  # its registration goes out now
                    return self._step_registering(child)
                return True
        if now - child.spawned_at > cfg.start_timeout:
            self._on_death(
                child,
                f"did not answer /health within {cfg.start_timeout:g} s",
            )
        elif child.probe is None and now - child.last_probe >= cfg.start_poll:
            self._submit_probe(child, now)
        return True

    def _step_running(self, child: SupervisedChild, now: float) -> bool:
        cfg = self.config
        if child.hung is not None:
            reason, child.hung = child.hung, None
            self._on_death(child, reason)
            return True
        if child.probe is not None and child.probe.done():
            # a real call answered since the probe went out proves it alive too
            healthy = _future_ok(child.probe) or child.answered_at >= child.last_probe
            child.probe = None
            child.missed = 0 if healthy else child.missed + 1
            if child.missed >= cfg.max_missed:
                self._on_death(
                    child,
                    f"stopped answering health checks ({child.missed} missed)",
                )
                return True
        due = child.probe is None and now - child.last_probe >= cfg.health_interval
        if due and bound_log(child.log_path, cfg.log_max_bytes):
            child.log_offset = 0
        since = child.healthy_since
        if child.failures and since is not None and now - since >= cfg.stable_after:
            child.failures = 0  # a stable run forgives earlier crashes
        if child.probe is None and now - child.last_probe >= cfg.health_interval:
            self._submit_probe(child, now)
        if child.needs_register and self.executor.status == "running":
            child.needs_register = False
            child.status = "registering"
            return True
        return False

    def _step_registering(self, child: SupervisedChild) -> bool:
        if child.job is None:
            if self.executor.status == "failed":
                child.note = "not registered with the executor (it failed): no tools"
                self._mark_running(child)
                return False
            if self.executor.status != "running":
                return True  # wait for the executor
            child.job = self._pool.submit(self._register, child)
            child.job.add_done_callback(self._wake_monitor)
            return True
        if not child.job.done():
            return True
        error = child.job.exception()
        listing = child.job.result() if error is None else None
        child.job = None
        if error is not None:
            child.note = f"registration with the executor failed: {error}"
            log.warning("%s: %s", child.child_id, child.note)
        self._mark_running(child)
        if child.user_id == OWNER:  # another user's process has the same tools
            self._on_registered(child.child_id, listing)
        return False

    def _on_healthy(self, child: SupervisedChild, now: float) -> None:
        child.healthy_since = now
        child.missed = 0
        if child.proc is not None and child.confinement and child.confinement.confined:
            child.app_pid = confined_pid(child.proc)
        if child.spec is None:  # the executor
            self._executor_up.set()
            self._mark_running(child)
            if child.restarts:
                for app in [*self._apps.values(), *self._served.values()]:
                    if app.status == "running":
                        app.needs_register = True
                self._on_registered("*", None)
            return
        child.status = "registering"

    def _mark_running(self, child: SupervisedChild) -> None:
        child.status = "running"
        child.error = None
        child.settled = True
        child.last_probe = time.monotonic()

    def _on_death(self, child: SupervisedChild, reason: str) -> None:
        cfg = self.config
        proc = child.proc
        child.proc = None
        child.app_pid = None
        child.probe = None
        child.healthy_since = None
        child.settled = True
        child.failures += 1
        # dead, or given up as unresponsive: its group is killed at once, so a
        # frozen app cannot wake and answer a call that was already failed
        child.job = self._pool.submit(stop_groups, [proc] if proc else [], 0.0)
        if child.failures > cfg.max_restarts:
            child.status = "failed"
            child.error = f"{reason}; gave up after {child.restarts} restarts"
            log.warning("%s failed: %s", child.child_id, child.error)
            if child.spec is not None and self.executor.status == "running":
                self._pool.submit(self._unregister, child.spec.app_id, child.user_id)
            return
        child.status = "restarting"
        child.error = reason
        child.next_start = time.monotonic() + cfg.delay(child.failures)
        log.warning(
            "%s: %s; restart in %.1f s", child.child_id, reason, cfg.delay(child.failures)
        )

    def _exit_reason(self, child: SupervisedChild, code: int) -> str:
        if code > 128 and child.confinement and child.confinement.confined:
            code = 128 - code  # bubblewrap exits with 128 + the signal that killed it
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"killed by {name}"
        reason = f"exited with code {code}"
        tail = log_tail(child.log_path, since=child.log_offset)
        return f"{reason}: {tail}" if tail else reason

    # ------------------------------------------------------------- spawning

    def _spawn(self, child: SupervisedChild, *, first: bool) -> None:
        if not first:
            child.restarts += 1
        if not port_is_free(child.port):
            old = child.port
            child.port = self._ports.reassign(child.child_id)
            log.warning("%s: port %d is taken, using %d", child.child_id, old, child.port)
            if child.spec is None:
                self.executor_client.url = child.url
            self._on_ports(dict(self._ports.assigned))
        child.status = "starting"
        child.log_offset = 0 if first else log_size(child.log_path)
        child.spawned_at = time.monotonic()
        child.last_probe = 0.0
        child.probe = None
        try:
            if child.spec is None:
                child.proc = spawn_child(
                    self._launch.args(child.port),
                    cwd=REPO_ROOT,
                    # the controller's address: the `schedule` tool forwards there
                    env={
                        **executor_environment(self.master_token),
                        "AIOS_CONTROLLER_URL": self._controller_url,
                    },
                    log_path=child.log_path,
                    append=not first,
                )
            else:
                if first:
                    self._confiner.prepare(child.spec)
                child.confinement = self._confiner.decide(child.spec)
                child.proc = self._spawn_app(child, child.spec, child.confinement, first)
        except OSError as exc:
            child.proc = None
            self._on_death(child, f"could not be started: {exc}")

    def _template_pending(self, use: AppUse, now: float) -> bool:
        """Whether a wanted start waits one more tick for the app template, which is
        still importing: at most `_TEMPLATE_READY_S` from the first tick that saw it
        (then the app starts as a new interpreter). Never blocks the monitor."""
        forks = self._forks
        if forks is None or not forks.starting:
            use.template_wait_since = None
            return False
        if use.template_wait_since is None:
            use.template_wait_since = now
        if now - use.template_wait_since < _TEMPLATE_READY_S:
            return True
        use.template_wait_since = None
        return False

    def _spawn_app(
        self, child: SupervisedChild, spec: AppSpec, how: AppConfinement, first: bool
    ) -> ChildProcess:
        """Fork the app from the template when it can run there (a confined app only
        where a forked child can confine itself), else start a new interpreter,
        inside bubblewrap when `how` confines it."""
        served = child.user_id != OWNER
        workdir = self.workdir_of(child) if served else None
        env = app_environment(
            spec,
            port=child.port,
            token=child.token,
            executor_url=self.executor.url,
            controller_url=self._controller_url,
            settings=self._app_settings.get(spec.app_id, {}),
            workdir=workdir,
            user_id=child.user_id if served else None,
        )
        forks = self._forks
        forkable = forks is not None and forks.wait_ready(_TEMPLATE_READY_S)
        if forks is not None and forkable and (not how.confined or forks.confines is None):
            try:
                forked = forks.spawn(
                    self._confiner.fork_plan(spec, how, workdir),
                    env,
                    child.log_path,
                    append=not first,
                )
                if how.confined:
                    child.confinement = replace(how, note=f"{how.note}; {_FORKED_NOTE}")
                return forked
            except OSError as exc:
                log.warning("%s: not forked (%s), started anew", spec.app_id, exc)
        return spawn_child(
            self._confiner.command(spec, [sys.executable, str(spec.entry)], how, workdir),
            cwd=spec.folder,
            env=env,
            log_path=child.log_path,
            append=not first,
        )

    # --------------------------------------------------------- pool workers

    def _submit_probe(self, child: SupervisedChild, now: float) -> None:
        child.last_probe = now
        timeout = self.config.health_timeout
        if child.spec is None:
            client = self.executor_client
            pid = child.proc.pid if child.proc is not None else None
            child.probe = self._pool.submit(client.healthy, timeout, pid)
        else:
            app = AppClient(child.child_id, child.url, child.token)
            if child.status == "starting":
                child.probe = self._pool.submit(self._first_probe, child, app, timeout)
            else:
                child.probe = self._pool.submit(app.health, timeout)
        child.probe.add_done_callback(self._wake_monitor)

    @staticmethod
    def _first_probe(child: SupervisedChild, app: AppClient, timeout: float) -> bool:
        """Whether the starting app answers; its tools are kept for its registration."""
        alive, tools = app.first_answer(timeout)
        if alive:
            child.manifest_tools = tools
        return alive

    def _wake_monitor(self, done: Future) -> None:
        """A probe or registration ended: the monitor acts on it at once (a start
        then takes no more polling rounds than it must)."""
        self._wake.set()

    def _register(self, child: SupervisedChild) -> dict[str, Any] | None:
        """Tell the executor of the app; the app's tool listing it answers with."""
        spec = child.spec
        assert spec is not None and spec.manifest is not None
        client = AppClient(child.child_id, child.url, child.token)
        tools, child.manifest_tools = child.manifest_tools, None  # read by its first probe
        if tools is None:
            try:
                tools = client.manifest_tools(timeout=max(2.0, self.config.health_timeout))
            except AiosError as exc:
                child.note = f"GET /manifest failed, no custom tools: {exc.message}"
                tools = []
        registration = {
            "app_id": spec.app_id,
            "workdir": str(self.workdir_of(child)),
            "token": child.token,
            "url": child.url,
            "shell_whitelist": spec.manifest.shell_whitelist,
            "http_domain_whitelist": spec.manifest.http_domain_whitelist,
            "custom_tools": tools,
        }
        if child.user_id != OWNER:  # its token acts for that user alone
            registration["user_id"] = child.user_id
        return self.executor_client.register(registration)

    def _unregister(self, app_id: str, user_id: str = OWNER) -> None:
        try:
            self.executor_client.unregister(app_id, user_id)
        except AiosError:
            pass

    # ------------------------------------------------------------- status

    def _info(self, child: SupervisedChild) -> AppInfo:
        spec = child.spec
        assert spec is not None
        status, port, error, pid = self._status_key(child)
        return AppInfo(
            id=spec.app_id,
            name=spec.name,
            icon=spec.icon,
            description=spec.description,
            names=spec.names,
            descriptions=spec.descriptions,
            status=status,  # type: ignore[arg-type]
            port=port,
            error=error,
            pid=pid,
            restarts=child.restarts,
            sandbox=child.confinement.kind if child.confinement else None,
            sandbox_note=child.confinement.note if child.confinement else None,
            network=bool(child.confinement and child.confinement.network),
            system_role=spec.manifest.system_role if spec.manifest else None,
        )

    @staticmethod
    def _status_key(
        child: SupervisedChild,
    ) -> tuple[str, int | None, str | None, int | None]:
        """(status, port, error, pid): what a status listener is told again on change."""
        status = child.public_status()
        error = child.error
        if child.note and status != "failed":
            error = child.note if error is None else f"{error}; {child.note}"
        pid = child.app_pid or (child.proc.pid if child.proc is not None else None)
        return status, child.port, error, pid

    def _publish_if_changed(self, child: SupervisedChild) -> None:
        """Tell the status listener when the child's status key changed (every tick
        asks: the `AppInfo` is built only then); a process serving another user than
        the owner is not shown on the desktop."""
        if child.spec is None or child.user_id != OWNER:
            return
        key = self._status_key(child)
        if key != child.published:
            child.published = key
            try:
                self._on_status(self._info(child))
            except Exception:
                log.exception("status listener failed")


def _future_ok(future: Future) -> bool:
    try:
        return bool(future.result(timeout=0))
    except Exception:
        return False


def _unavailable(name: str, app_id: str, status: str, error: str | None) -> AppUnavailable:
    """The error of an app that does not run now: the user reads that it is
    restarting, starting or unavailable; the technical part is its `detail`."""
    technical = f"app {app_id} is {status}" + (f": {error}" if error else "")
    return AppUnavailable(
        technical,
        detail=technical,
        variant=status if status in ("restarting", "starting") else None,
        placeholders={"app": name},
    )
