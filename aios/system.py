"""One launch of Triton AIOS: everything `aios start` wires together (S-34).

Order matters for a fast start: read settings and scan the apps (no Flask yet),
assign ports, spawn the executor and every app at once, and only then import Flask
and serve the controller's API while the children boot; wait until the executor
runs and every app was started once; then write the launch files (live port map,
token, pid) and hand back the desktop URL carrying the token.
"""

from __future__ import annotations

import logging
import os
import secrets
import sys
from dataclasses import dataclass
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any

from aios_protocol.errors import AiosError
from aios_runtime.files import state_problems
from aios_runtime.settings import load_settings_or_set_aside, user_settings_path
from controller.api.tools import ToolListings
from controller.apps.discovery import discover_apps
from controller.apps.lifecycle import AppsSettings
from controller.apps.ports import PortAssigner, load_preferred_ports, port_is_free
from controller.apps.processes import ExecutorLaunch
from controller.apps.supervisor import StartupFailed, Supervisor, SupervisorConfig
from controller.events import EventBus, ExecutorEventRelay
from controller.pipeline.context import ContextBuilder
from controller.state_dir import StateDir

__all__ = ["Controller", "LaunchOptions"]

log = logging.getLogger("aios.controller")

LLM_SUMMARY_MIN_TURNS = 3


@dataclass
class LaunchOptions:
    config_path: Path
    apps_dir: Path
    state_dir: Path
    ports: str = "ports.json"  # a port map file, or "auto"
    ready_timeout: float = 60.0
    executor_command: list[str] | None = None
    speak: bool = True  # say replies aloud (S-91); off for --headless


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
        self._summarizer: Any = None
        self.speaker: Any = None
        self._relay: ExecutorEventRelay | None = None
        self.scheduler: Any = None  # scheduler.Scheduler, once serving
        self.watcher: Any = None  # controller.apps.watcher.AppsFolderWatcher
        self.url = ""

    @property
    def desktop_url(self) -> str:
        return f"{self.url}/?token={self.token}"

    def start(self) -> str:
        """Start everything; the desktop URL once all services are healthy."""
        opts = self.options
        self.state.create()
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
        specs = discover_apps(apps_dir, self.state.root / "workspaces")
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
        extra = settings.model_extra or {}
        # the executor's tool listing, the one source of every tool list here
        self.tools = ToolListings(
            lambda app_id: self._supervisor().executor_client.tool_listing(app_id)
        )
        self.contexts = ContextBuilder(self.tools.names, cache_tools=False)
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
            config=SupervisorConfig.from_mapping(extra.get("supervisor")),
            app_sandbox=extra.get("app_sandbox"),
            on_status=self._publish_status,
            on_ports=self.state.write_ports,
            on_registered=lambda app_id: self.tools.invalidate(
                None if app_id == "*" else app_id
            ),
            # apps start on first use, stop when idle; the folder may change meanwhile
            apps_dir=apps_dir,
            apps=AppsSettings.from_mapping(extra.get("apps")),
            on_removed=self._publish_removed,
        )
        self.supervisor = supervisor
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
            supervisor.wait_settled(opts.ready_timeout)
        except BaseException:
            self.stop()
            raise
        self._relay = ExecutorEventRelay(self.events, supervisor.executor_client.events)
        self._relay.start()
        self.watcher.start(specs)
        self.scheduler.start()  # its first tick is the catch-up after downtime
        if opts.speak:
            self.speaker.welcome()  # S-34: "欢迎使用 Triton AIOS" once ready
        return self.desktop_url

    def _serve(
        self, settings: Any, config_path: Path, port: int, ports: PortAssigner
    ) -> None:
        from aios_runtime.edge import token_matches
        from aios_runtime.serving import start_server
        from controller.api.about import about_blueprint
        from controller.api.desktop import ApiServices, create_app
        from controller.api.installs import AppInstalls, installs_blueprint
        from controller.api.llm import allow_app_tokens_for_llm, llm_blueprint
        from controller.api.tasks import tasks_blueprint
        from controller.api.tools import tools_blueprint
        from controller.llm.client import LLMClient
        from controller.llm.summary import BackgroundSummarizer
        from controller.permissions.confirmations import ConfirmationGate
        from controller.permissions.policy import PermissionPolicy
        from controller.pipeline.admission import Admission, AdmissionLimits
        from controller.pipeline.run import Pipeline, PipelineLimits
        from controller.routing.llm_router import FallbackRouter, LLMRouter
        from controller.routing.router import DeterministicRouter
        from controller.routing.skills import SkillRouter
        from controller.sessions import Session, SessionStore
        from controller.settings_store import SettingsStore
        from mcp_server.toolbox import AppToolbox, toolbox_blueprint
        from openai_entry.api import openai_blueprint
        from openai_entry.turn import AddressedRouter, ChatService
        from scheduler.api import (
            allow_app_tokens_for_schedule,
            schedules_blueprint,
        )
        from scheduler.wiring import build_scheduler
        from voice.input import Recognizer, voice_blueprint
        from voice.output import Speaker, follow_speak_events, speech_blueprint

        supervisor = self.supervisor
        assert supervisor is not None
        store = SettingsStore(user_settings_path(self.state.root), settings)
        llm = LLMClient(settings)
        store.subscribe(llm.reconfigure)
        self.contexts.default_language = lambda: store.get().ui_language
        self._summarizer = summarizer = BackgroundSummarizer(llm)
        sessions = SessionStore(self.state.sessions_dir)

        def keep_summary(session_id: str, text: str) -> None:
            with sessions.lock(session_id):
                current = sessions.get(session_id)
                if current is not None and text:
                    current.context["llm_summary"] = text
                    sessions.save(current)

        def summarise_later(session: Session) -> None:
            if not summarizer.enabled:  # no model: every instruction would ask this
                return
            # Short histories read fine deterministically; the model is asked only
            # once a session has a few instructions worth condensing.
            asked = (t for t in session.history if t.get("kind") == "instruction")
            if next(islice(asked, LLM_SUMMARY_MIN_TURNS - 1, None), None) is not None:
                sid = session.session_id
                summarizer.submit(
                    sid, session.history, lambda text: keep_summary(sid, text)
                )

        # (settings, their limits): read several times per instruction, the limits
        # are built again only when the settings were replaced (PUT /api/settings)
        latest_limits: tuple[Any, PipelineLimits] | None = None

        def limits() -> PipelineLimits:
            nonlocal latest_limits
            current = store.get()
            if latest_limits is None or latest_limits[0] is not current:
                latest_limits = (
                    current,
                    PipelineLimits(
                        max_step_rounds=current.max_step_rounds,
                        app_timeout=float(
                            (current.model_extra or {}).get("app_timeout", 60)
                        ),
                        step_timeout=current.timeout_for,
                    ),
                )
            return latest_limits[1]

        def run_steps(body: dict[str, Any], timeout: float) -> dict[str, Any]:
            return supervisor.executor_client.run(body, timeout)

        def run_scheduled_steps(body: dict[str, Any], timeout: float) -> dict[str, Any]:
            # the executor knows an app (its workdir, whitelists) only while it runs
            supervisor.ensure_running(str(body.get("app_id") or ""))
            return run_steps(body, timeout)

        def manifest_whitelist(app_id: str) -> list[str] | None:
            manifest = supervisor.spec(app_id).manifest
            return manifest.shell_whitelist if manifest else None

        # risky steps pause for the user (config `permissions.confirm`, default on)
        asking = ((settings.model_extra or {}).get("permissions") or {}).get(
            "confirm", True
        )
        confirmations = (
            ConfirmationGate(self.state.root / "confirmations", self.events)
            if asking
            else None
        )
        pipeline = Pipeline(
            # `triton/<app_id>` over /v1 addresses one app without routing
            router=AddressedRouter(
                FallbackRouter(
                    # what no app claims may still match a skill's summary (技能)
                    SkillRouter(DeterministicRouter(), self._skills),
                    LLMRouter(llm),
                )
            ),
            apps=supervisor,
            run_steps=run_steps,
            contexts=self.contexts,
            sessions=sessions,
            events=self.events,
            limits=limits,
            on_turn=summarise_later,
            permissions=(
                policy := PermissionPolicy(
                    self.state.root / "permissions.json",
                    store.get,
                    manifest_whitelist,
                    self.tools.entries,
                )
            ),
            confirmations=confirmations,
        )
        self.speaker = speaker = Speaker(store.get())
        recognizer = Recognizer(store.get(), supervisor.profiles)
        store.subscribe(speaker.configure)
        store.subscribe(recognizer.configure)

        admission = Admission(
            AdmissionLimits.from_mapping((settings.model_extra or {}).get("admission"))
        )

        def instruct(text: str, session_id: str | None, source: str) -> dict[str, Any]:
            from aios_protocol.messages import InstructionRequest

            request = InstructionRequest(text=text, session_id=session_id, source=source)
            with admission.instruction():
                return pipeline.instruction(request).dump()

        def language_for(session_id: str | None) -> str:
            """What the user reads: the session's language, else the settings'."""
            return self.contexts.language(sessions.get(session_id) if session_id else None)

        if self.options.speak:
            follow_speak_events(self.events, speaker)
        self.scheduler = build_scheduler(
            self.state.root,
            run_steps=run_scheduled_steps,
            events=self.events,
            policy=policy,
            instruct=lambda text, sid: instruct(text, sid, "text"),
            spec_of=supervisor.spec,
            confirmations=confirmations,
            cancel_session=lambda sid: sum(
                pipeline.cancels.cancel_app(info.id, sid) for info in supervisor.app_infos()
            ),
            language=lambda: language_for(None),  # a job has no desktop session
        )
        app = create_app(
            ApiServices(
                token=self.token,
                pipeline=pipeline,
                apps=supervisor,
                events=self.events,
                settings=store,
                store_ui_snapshot=lambda snap: supervisor.executor_client.set_system_cache(
                    "ui_snapshot", snap
                ),
                executor_status=supervisor.executor_status,
                llm_status=llm.status,
                state_problems=partial(state_problems, self.state.root, config_path),
                authenticate=allow_app_tokens_for_schedule(
                    allow_app_tokens_for_llm(
                        token_matches(self.token), supervisor.app_for_token
                    ),
                    supervisor.app_for_token,
                ),
                blueprints=[
                    llm_blueprint(llm, events=self.events, tool_listing=self.tools.entries),
                    tools_blueprint(self.tools),
                    toolbox_blueprint(
                        AppToolbox(supervisor, policy, store.get, self.tools)
                    ),
                    speech_blueprint(speaker),
                    voice_blueprint(recognizer, instruct, language_for),
                    schedules_blueprint(self.scheduler),
                    tasks_blueprint(pipeline.cancels),
                    about_blueprint(),
                    installs_blueprint(
                        AppInstalls(
                            apps_dir=self.watcher.apps_dir,
                            workspaces=self.state.root / "workspaces",
                            rescan=self.watcher.rescan,
                            app_infos=supervisor.app_infos,
                        )
                    ),
                    openai_blueprint(
                        ChatService(
                            pipeline=pipeline,
                            sessions=sessions,
                            apps=supervisor,
                            admission=admission,
                            confirmations=confirmations,
                            events=self.events,
                        ),
                        desktop_token=self.token,
                        settings=store.get,
                    ),
                ],
                admission=admission,
                confirmations=confirmations,
            )
        )
        if not port_is_free(port):
            port = ports.reassign("controller")
            self.url = f"http://127.0.0.1:{port}"
        # idle keep-alive clients must not lock the desktop out (D2): room for many
        _raise_open_files(4096)
        # running + queued instructions, plus room for event streams, health checks,
        # opens and actions of other apps
        threads = admission.threads_needed + 16
        self._server = start_server(app, port, threads=threads, connection_limit=1000)

    def _skills(self) -> list[dict[str, Any]]:
        """The shared skills' short forms, from the executor's listing (for routing)."""
        skills = self.tools.listing("").providers.get("skills", {}).get("skills")
        return skills if isinstance(skills, list) else []

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
            self.state.root / "workspaces",
            supervisor.apply_spec,
            supervisor.installed,
            on_change=note_change,
        )

    def stop(self) -> None:
        """Stop the scheduler, the relay, the API server and every child process group."""
        if self.scheduler is not None:
            self.scheduler.stop()
        if self.watcher is not None:
            self.watcher.stop()
        if self._relay is not None:
            self._relay.stop()
        if self._summarizer is not None:
            self._summarizer.close()
        if self.speaker is not None:
            self.speaker.close()
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
