"""When an app runs: started on first use, stopped when idle (config.json's `apps`).

`AppsSettings` is config.json's `apps` section (`aios_runtime.settings`):
`idle_stop_s` (default 600) is how long an app may go without a call before the
supervisor stops it, and `start_at_launch` (default false) starts every app at launch
instead of on first use. An app whose manifest says `"keep_alive": true` is started
at launch and never stopped for being idle. `AppUse` is what the supervisor knows of
one app process's use: when it was last called, how many calls are in flight, its own
calls to the controller (its model calls: a background sub-agent's turns), and
whether a start was asked for. Its own calls keep it in use only within
`background_max_s` of the latest call the controller made to it, so an app that
calls the model forever is still stopped. An app stopped for being idle is `idle`
again: routable, and started by its next call.

`AppLifecycle` is the part of the supervisor (`controller.apps.supervisor`) that
does this, and that changes the set of apps while the system runs (`apply_spec`:
an app added, replaced or removed). Starts happen on the monitor thread only (a
child must be spawned from a long-lived thread, see `processes`): a caller marks
the app `start_wanted`, wakes the monitor and waits on the supervisor's condition.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aios_protocol.messages import AppInfo
from aios_runtime.settings import AppsSettings, SupervisorSettings
from aios_runtime.users import OWNER
from controller.apps.discovery import AppSpec
from controller.apps.processes import stop_groups
from controller.apps.supervision import SupervisedChild
from controller.routing.router import AppProfile

if TYPE_CHECKING:
    from controller.apps.confinement import Confiner
    from controller.apps.ports import PortAssigner
    from controller.pipeline.run import AppTarget

__all__ = ["AppLifecycle", "AppUse", "AppsSettings"]

log = logging.getLogger("aios.controller.supervisor")


@dataclass
class AppUse:
    """One app's use as the supervisor's lazy start and idle stop see it."""

    keep_alive: bool = False
    last_used: float = 0.0  # time.monotonic() of the latest call's start or end
    in_flight: int = 0
    # the process's own calls to the controller (its model calls): in flight, and
    # time.monotonic() of the latest one's start or end
    own_in_flight: int = 0
    own_last: float = 0.0
    start_wanted: bool = False  # a caller waits for the monitor to start it
    # since when its wanted start waits for the app template to be ready
    template_wait_since: float | None = None
    running_since: float | None = None  # when this run was first seen running

    def touch(self) -> None:
        self.last_used = time.monotonic()

    def idle_for(self, now: float, started: float, own_max: float = 0.0) -> float:
        """Seconds without a call, counted from the later of the last call and
        `started` (when this run was first seen running); 0 while a call runs. The
        process's own calls count as calls up to `own_max` seconds after that."""
        if self.in_flight:
            return 0.0
        called = max(self.last_used, started)
        own = now if self.own_in_flight else self.own_last
        return now - max(called, min(own, called + own_max))

    @contextmanager
    def own_call(self, lock: Any) -> Iterator[None]:
        """One call the process makes to the controller, counted under `lock`."""
        with lock:
            self.own_in_flight += 1
            self.own_last = time.monotonic()
        try:
            yield
        finally:
            with lock:
                self.own_in_flight -= 1
                self.own_last = time.monotonic()


class AppLifecycle:
    """Lazy start, idle stop and changes of the app set; mixed into `Supervisor`,
    whose state (declared here) and `_spawn` / `_unregister` it uses."""

    config: SupervisorSettings
    apps_settings: AppsSettings
    executor: SupervisedChild
    _apps: dict[str, SupervisedChild]
    _served: dict[str, SupervisedChild]  # processes serving other users (served.py)
    _use: dict[str, AppUse]
    _broken: dict[str, AppSpec]
    _targets: dict[str, tuple[int, AppTarget]]
    _profiles: tuple[AppProfile, ...]
    _ports: PortAssigner
    _logs: Path
    _confiner: Confiner
    _lock: Any  # a threading.RLock, the one `_changed` waits on
    _changed: threading.Condition
    _wake: threading.Event
    _stopping: threading.Event
    _pool: ThreadPoolExecutor
    _on_status: Callable[[AppInfo], None]
    _on_removed: Callable[[str], None]

    def _spawn(self, child: SupervisedChild, *, first: bool) -> None:
        raise NotImplementedError

    def _unregister(self, app_id: str, user_id: str = OWNER) -> None:
        raise NotImplementedError

    def _child_of(
        self, app_id: str, user_id: str = OWNER, *, make: bool = False
    ) -> SupervisedChild | None:
        raise NotImplementedError

    def _is_current(self, child: SupervisedChild) -> bool:
        raise NotImplementedError

    def _served_of(self, app_id: str) -> list[SupervisedChild]:
        raise NotImplementedError

    def _template_pending(self, use: AppUse, now: float) -> bool:
        raise NotImplementedError

    def _new_child(self, spec: AppSpec) -> SupervisedChild:
        """The record of an app to supervise; `idle` until it is started."""
        assert spec.manifest is not None
        port = self._ports.assign(spec.app_id, spec.manifest.port)
        self._use[spec.app_id] = AppUse(keep_alive=spec.manifest.keep_alive)
        child = SupervisedChild(
            spec.app_id,
            port,
            self._logs / f"{spec.app_id}.log",
            spec=spec,
            token=secrets.token_urlsafe(24),
            note=spec.requirements_note,
            confinement=self._confiner.decide(spec),
            status="idle",
            # one started at launch is waited for by `wait_settled`
            settled=not self._starts_at_launch(spec.app_id),
        )
        return child

    def _starts_at_launch(self, app_id: str) -> bool:
        use = self._use.get(app_id)
        return self.apps_settings.start_at_launch or bool(use and use.keep_alive)

    def _build_profiles(self) -> tuple[AppProfile, ...]:
        """The router's view of every startable app, running or not (from manifests)."""
        return tuple(
            AppProfile.of(c.spec.app_id, c.spec.manifest)
            for c in sorted(self._apps.values(), key=lambda c: c.child_id)
            if c.spec is not None and c.spec.manifest is not None
        )

    def ensure_running(
        self, app_id: str, timeout: float | None = None, user_id: str = OWNER
    ) -> None:
        """Start `app_id`'s process for `user_id` (the owner: the app's own; another
        user: the one serving them alone) if it is idle and wait until it runs, fails
        or crashes (at most `timeout`, default `start_timeout`); a first start at
        launch is waited for too. Returns without a word otherwise: `target` says why
        it cannot run."""
        wait = self.config.start_timeout + 2.0 if timeout is None else timeout
        deadline = time.monotonic() + wait
        with self._changed:
            child = self._child_of(app_id, user_id, make=True)
            use = self._use.get(child.child_id) if child is not None else None
            if child is None or use is None:
                return
            use.touch()
            if child.status == "idle":
                use.start_wanted = True
                self._wake.set()
            while self._is_current(child) and not self._stopping.is_set():
                first_start = child.status in ("starting", "registering") and (
                    child.restarts == 0
                )
                wanted = child.status == "idle" and use.start_wanted
                if child.status == "running" or not (first_start or wanted):
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._changed.wait(min(left, 0.25))

    @contextmanager
    def _in_use(self, child_id: str) -> Iterator[None]:
        """One call to the app process: it is not idle while the call runs."""
        with self._lock:
            use = self._use.get(child_id)
            if use is not None:
                use.in_flight += 1
                use.touch()
        try:
            yield
        finally:
            with self._lock:
                if use is not None:
                    use.in_flight -= 1
                    use.touch()

    def _step_use(self, child: SupervisedChild, now: float) -> bool:
        """Lazy start and idle stop of one app (on the monitor thread, which spawns);
        True while it needs fast polling."""
        use = self._use.get(child.child_id)
        if use is None:  # the executor
            return False
        if child.status == "idle":
            use.running_since = None
            if child.job is not None:
                if not child.job.done():
                    return True  # its previous process group is still being stopped
                child.job = None
            if not use.start_wanted:
                return False
            if self._template_pending(use, now):
                return True  # forked once the template is ready; supervision goes on
            use.start_wanted = False
            use.touch()
            self._spawn(child, first=True)
            return True
        if child.status != "running":
            use.running_since = None
            return False
        if use.running_since is None:
            use.running_since = now  # idle time counts from here at the earliest
        idle_stop = self.apps_settings.idle_stop_s
        if (
            not (use.keep_alive and child.user_id == OWNER)
            and idle_stop > 0
            and child.job is None
            and use.idle_for(now, use.running_since, self.apps_settings.background_max_s)
            >= idle_stop
        ):
            self._stop_idle(child)
            return True
        return False

    def _stop_idle(self, child: SupervisedChild) -> None:
        """Stop an app nobody called for `idle_stop_s`; it is `idle` (startable) again."""
        log.info(
            "%s: idle for %.0f s, stopped", child.child_id, self.apps_settings.idle_stop_s
        )
        proc = child.proc
        self._release(child)
        child.status = "idle"
        child.error = None
        child.restarts = 0  # a clean stop: its next start is a first start again
        child.failures = 0
        child.job = self._pool.submit(self._retire, child, proc, registered=True)

    def _release(self, child: SupervisedChild) -> None:
        child.proc = None
        child.app_pid = None
        child.probe = None
        child.healthy_since = None
        child.needs_register = False

    def _retire(
        self,
        child: SupervisedChild,
        proc: Any,
        *,
        registered: bool,
        after: Future | None = None,
    ) -> None:
        """Unregister `child`'s process from the executor, then stop its process
        group (once the job `after`, an earlier stop of the same app, has finished)."""
        if after is not None:
            after.exception()  # waits; its failure is not this job's
        if registered and self.executor.status == "running" and child.spec is not None:
            self._unregister(child.spec.app_id, child.user_id)
        stop_groups([proc] if proc is not None else [], self.config.stop_grace)

    def installed(self) -> dict[str, AppSpec]:
        """Every app known now, startable or broken, by id."""
        with self._lock:
            found = {i: c.spec for i, c in self._apps.items() if c.spec is not None}
            return {**dict(self._broken), **found}

    def apply_spec(self, app_id: str, spec: AppSpec | None) -> str:
        """Bring one app in line with its folder: `spec` None removes it (its process
        stopped), a broken spec replaces it by its error, a good one adds it or
        replaces it (restarted if it was running). What was done, in one word:
        added, replaced, removed, broken or unchanged."""
        with self._changed:
            old = self._apps.get(app_id)
            was_running = old is not None and old.status not in ("idle", "failed")
            was_broken = self._broken.pop(app_id, None)
            for served in self._served_of(app_id):  # started again on their next call
                self._drop(served)
            if old is not None:
                self._drop(old)
            if spec is None:
                self._ports.assigned.pop(app_id, None)
                done = "removed" if (old or was_broken) else "unchanged"
            elif not spec.ok:
                self._broken[app_id] = spec
                done = "broken"
            else:
                child = self._new_child(spec)
                if old is not None and old.job is not None:
                    child.job = old.job  # start only once the old group is gone
                self._apps[app_id] = child
                if was_running or self._starts_at_launch(app_id):
                    self._use[app_id].start_wanted = True
                    self._wake.set()
                done = "replaced" if (old or was_broken) else "added"
            self._profiles = self._build_profiles()
            self._changed.notify_all()
        if spec is None and done == "removed":
            self._on_removed(app_id)
        elif spec is not None and not spec.ok:
            self._on_status(self._broken_info(spec))
        return done

    def _drop(self, child: SupervisedChild) -> None:
        """Take `child` out of supervision; its process group is stopped in the pool."""
        proc = child.proc
        registered = child.status in ("running", "registering")
        self._release(child)
        child.status = "stopped"
        if child.user_id == OWNER:
            self._apps.pop(child.child_id, None)
        else:
            self._served.pop(child.child_id, None)
            self._ports.assigned.pop(child.child_id, None)
        self._use.pop(child.child_id, None)
        self._targets.pop(child.child_id, None)
        earlier = child.job if child.job is not None and not child.job.done() else None
        child.job = self._pool.submit(
            self._retire, child, proc, registered=registered, after=earlier
        )

    def _broken_info(self, spec: AppSpec) -> AppInfo:
        return AppInfo(
            id=spec.app_id,
            name=spec.name,
            icon=spec.icon,
            description=spec.description,
            names=spec.names,
            descriptions=spec.descriptions,
            status="failed",
            error=spec.error,
        )
