"""One launch of Triton AIOS: everything `aios start` wires together.

Order matters for a fast start: read settings and scan the apps (no Flask yet),
assign ports, spawn the executor (and the apps kept alive, `keep_alive` or
`apps.start_at_launch`; the others start on first use), and only then import Flask,
compose the parts (`aios.compose`) and serve the controller's API while the children
boot; wait until the executor runs and the apps started at launch answer; then write
the launch files (live port map, token, pid) and hand back the desktop URL carrying
the token.
"""

from __future__ import annotations

import logging
import os
import secrets
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aios_protocol.errors import AiosError
from aios_runtime import shipped
from aios_runtime.settings import load_settings_or_set_aside, user_settings_path
from aios_runtime.users import Sandboxes
from aios_runtime.warmup import warm_up_later
from controller.api.tools import ToolListings
from controller.apps.discovery import discover_apps
from controller.apps.ports import PortAssigner, load_preferred_ports, port_is_free
from controller.apps.processes import ExecutorLaunch
from controller.apps.supervisor import StartupFailed, Supervisor
from controller.events import EventBus, ExecutorEventRelay
from controller.pipeline.context import ContextBuilder
from controller.state_dir import StateDir

if TYPE_CHECKING:
    from aios.compose import Composed

__all__ = ["Controller", "LaunchOptions"]

log = logging.getLogger("aios.controller")


@dataclass
class LaunchOptions:
    config_path: Path
    apps_dir: Path
    state_dir: Path
    ports: str = str(shipped.PORTS)  # a port map file, or "auto"
    ready_timeout: float = 60.0
    executor_command: list[str] | None = None
    speak: bool = True  # say replies aloud; off for --headless


def _note(text: str) -> None:
    print(f"aios: {text}", file=sys.stderr, flush=True)


class Controller:
    """The running system: supervisor, pipeline, API server and launch files."""

    def __init__(self, options: LaunchOptions):
        self.options = options
        self.state = StateDir(Path(options.state_dir).expanduser().resolve())
        self.token = secrets.token_urlsafe(24)
        self.events = EventBus()
        self.supervisor: Supervisor | None = None
        self._server: Any = None
        self.parts: Composed | None = None  # once serving
        self._relay: ExecutorEventRelay | None = None
        self.watcher: Any = None  # controller.apps.watcher.AppsFolderWatcher
        self.url = ""

    @property
    def desktop_url(self) -> str:
        return f"{self.url}/?token={self.token}"

    def start(self) -> str:
        """Start everything; the desktop URL once all services are healthy."""
        opts = self.options
        self.state.create()
        for left in self.state.migrate_layout():  # what the upgrade could not move
            _note(left)
        running = self.state.running_pid()
        if running is not None and running != os.getpid():
            raise StartupFailed(
                f"a controller is already running from {self.state.root} (pid {running}); "
                "run `aios stop` first or use another --state-dir"
            )
        config_path = Path(opts.config_path).expanduser().resolve()
        user_settings = user_settings_path(self.state.root)
        settings = load_settings_or_set_aside(config_path, user=user_settings)
        # the user's workspaces live in the state folder, the apps folder stays as shipped
        apps_dir = Path(opts.apps_dir).expanduser().resolve()
        specs = discover_apps(apps_dir, self.state.workspaces_dir)
        if not specs:
            _note(f"no apps found in {opts.apps_dir}")
        for spec in specs:
            if spec.error:
                _note(f"app {spec.app_id} not started: {spec.error}")
            elif spec.requirements_note:
                _note(f"app {spec.app_id}: {spec.requirements_note}")

        try:
            preferred = load_preferred_ports(opts.ports)
        except AiosError as exc:  # a damaged preference file costs only the preferences
            _note(f"{exc.message}; free ports are used instead")
            preferred = {}
        ports = PortAssigner(preferred)
        controller_port = ports.assign("controller")
        self.url = f"http://127.0.0.1:{controller_port}"
        # the executor's tool listing, the one source of every tool list here
        self.tools = ToolListings(
            lambda app_id: self._supervisor().executor_client.tool_listing(app_id),
            fetch_for_user=lambda app_id, user: (
                self._supervisor().executor_client.tool_listing(app_id, user)
            ),
        )
        self.contexts = ContextBuilder(
            self.tools.names, cache_tools=False, list_user_tools=self.tools.names
        )
        supervisor = Supervisor(
            specs=specs,
            ports=ports,
            executor=ExecutorLaunch(
                config_path=config_path,
                state_dir=self.state.root,
                command=opts.executor_command,
            ),
            logs_dir=self.state.root / "logs",
            controller_url=self.url,
            app_settings=settings.app_settings,
            config=settings.supervisor,
            app_sandbox=settings.app_sandbox,
            on_status=self._publish_status,
            on_ports=self.state.write_ports,
            on_registered=self.tools.registered,
            # apps start on first use, stop when idle; the folder may change meanwhile
            apps_dir=apps_dir,
            apps=settings.apps,
            on_removed=self._publish_removed,
        )
        self.supervisor = supervisor
        # each user's calls work in their own sandbox (aios_runtime.users)
        self.contexts.sandboxes = Sandboxes(self.state.root)
        self.watcher = self._watch_apps(apps_dir, specs)
        supervisor.start()
        try:
            self._serve(settings, config_path, controller_port, ports)
            for service_id, wanted in ports.displaced.items():
                _note(
                    f"{service_id}: preferred port {wanted} is taken, "
                    f"using {ports.assigned[service_id]}"
                )
            self.state.write_launch(dict(ports.assigned), self.token, os.getpid())
            started = time.monotonic()
            supervisor.wait_settled(opts.ready_timeout)
            self._wait_routing_sources(opts.ready_timeout - (time.monotonic() - started))
        except BaseException:
            self.stop()
            raise
        self._relay = ExecutorEventRelay(self.events, supervisor.executor_client.events)
        self._relay.start()
        self.watcher.start(specs)
        assert self.parts is not None
        self.parts.scheduler.start()  # its first tick is the catch-up after downtime
        # the model's client (its library takes seconds to import) before the first question
        warm_up_later(self.parts.llm.warm_up, name="model client")
        if opts.speak:
            self.parts.speaker.welcome()  # the welcome line, once ready
        return self.desktop_url

    def _serve(
        self, settings: Any, config_path: Path, port: int, ports: PortAssigner
    ) -> None:
        """Compose the parts of this process (Flask is imported only now, while the
        children boot) and serve the API."""
        from aios.compose import Core, compose
        from aios_runtime.serving import start_server

        core = Core(
            state_root=self.state.root,
            config_path=config_path,
            token=self.token,
            events=self.events,
            supervisor=self._supervisor(),
            tools=self.tools,
            contexts=self.contexts,
            watcher=self.watcher,
            speak=self.options.speak,
        )
        self.parts = parts = compose(core, settings)
        if not port_is_free(port):
            port = ports.reassign("controller")
            self.url = f"http://127.0.0.1:{port}"
        # idle keep-alive clients must not lock the desktop out: room for many
        _raise_open_files(4096)
        self._server = start_server(
            parts.app, port, threads=parts.threads, connection_limit=1000
        )

    def _wait_routing_sources(self, timeout: float) -> None:
        """Until the tool sources that routing reads (the skills' summaries) have read
        their folders, so an instruction sent right after `ready` finds a skill; a
        source that failed is reported by the Tools window and does not hold it up."""
        executor = self._supervisor().executor_client
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            providers = executor.tool_listing("").get("providers") or {}
            if (providers.get("skills") or {}).get("state") != "starting":
                break
            if time.monotonic() >= deadline:
                raise StartupFailed(f"not ready after {timeout:g} s: the skills")
            time.sleep(0.05)
        self.tools.invalidate()  # a listing cached while they were read is stale

    def _supervisor(self) -> Supervisor:
        assert self.supervisor is not None
        return self.supervisor

    def _publish_status(self, info: Any) -> None:
        self.events.publish("app_status", info.dump(), app_id=info.id)

    def _publish_removed(self, app_id: str) -> None:
        self.events.publish(
            "app_status", {"id": app_id, "status": "removed"}, app_id=app_id
        )

    def _watch_apps(self, apps_dir: Path, specs: list[Any]) -> Any:
        """The apps folder's watcher (started once the system is ready)."""
        from controller.apps.watcher import AppsFolderWatcher

        supervisor = self._supervisor()

        def note_change(app_id: str, what: str, spec: Any) -> None:
            if spec is not None and spec.error:
                _note(f"app {app_id} not started: {spec.error}")

        return AppsFolderWatcher(
            apps_dir,
            self.state.workspaces_dir,
            supervisor.apply_spec,
            supervisor.installed,
            on_change=note_change,
        )

    def stop(self) -> None:
        """Stop the scheduler, the relay, the API server and every child process group."""
        if self.parts is not None:
            self.parts.scheduler.stop()
        if self.watcher is not None:
            self.watcher.stop()
        if self._relay is not None:
            self._relay.stop()
        if self.parts is not None:
            self.parts.summarizer.close()
            self.parts.speaker.close()
        self.events.close()
        self.events.wait_streams_closed(timeout=1.0)
        if self._server is not None:
            try:
                self._server.stop()
            except Exception:
                pass
            self._server = None
        if self.supervisor is not None:
            self.supervisor.stop()
        self.state.clear_launch(os.getpid())


def _raise_open_files(wanted: int) -> None:
    """Lift the soft limit on open files towards `wanted` (never above the hard one)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
