"""The one composition root: every part that runs in the controller's process, built in
the order it runs.

Read `compose` top to bottom: the settings the user changes, the model, the sessions,
the permission pause, the router, the pipeline, then what sits beside the controller
and reaches the pipeline only through a narrow interface (voice, the scheduler, the
OpenAI-compatible entry, MCP out), and last the HTTP API that serves them all. Each
builder below is one of those steps. The launch (`aios.system`) makes the `Core` (the
supervised apps and executor, the event bus, the tool listing) before, and starts and
stops what `compose` answers after.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask

from aios_protocol.messages import build_models
from aios_runtime.edge import token_matches
from aios_runtime.files import state_problems
from aios_runtime.settings import Settings, user_settings_path
from aios_runtime.users import OWNER
from controller.api.about import about_blueprint
from controller.api.desktop import ApiServices, create_app
from controller.api.installs import AppInstalls, installs_blueprint
from controller.api.layout import layout_blueprint
from controller.api.llm import allow_app_tokens_for_llm, llm_blueprint
from controller.api.tasks import tasks_blueprint
from controller.api.tools import ToolListings, tools_blueprint
from controller.apps.supervisor import Supervisor
from controller.apps.watcher import AppsFolderWatcher
from controller.events import EventBus
from controller.instructions import Instructions
from controller.layout_store import LayoutStore
from controller.llm.client import LLMClient
from controller.llm.summary import BackgroundSummarizer
from controller.llm.usage import UsageMeter
from controller.permissions.confirmations import ConfirmationGate
from controller.permissions.policy import PermissionPolicy
from controller.pipeline.admission import Admission
from controller.pipeline.context import USER_KEY, ContextBuilder, session_user
from controller.pipeline.run import Pipeline, PipelineLimits
from controller.routing.llm_router import FallbackRouter, LLMRouter
from controller.routing.router import DeterministicRouter, Router
from controller.routing.skills import SkillRouter
from controller.sessions import Session, SessionStore
from controller.settings_store import SettingsStore
from controller.state_dir import StateDir
from controller.user_settings import UserSettings, model_for, served_user
from mcp_server.toolbox import AppToolbox, toolbox_blueprint
from openai_entry.api import openai_blueprint
from openai_entry.turn import AddressedRouter, ChatService
from scheduler.api import allow_app_tokens_for_schedule, schedules_blueprint
from scheduler.scheduler import Scheduler
from scheduler.wiring import build_scheduler
from voice.input import Recognizer, voice_blueprint
from voice.output import Speaker, follow_speak_events, speech_blueprint

__all__ = ["Composed", "Core", "compose"]

# short histories read fine as they are: the model condenses a session only once it
# has this many instructions
LLM_SUMMARY_MIN_TURNS = 3


@dataclass
class Core:
    """What the launch made before anything is composed; every builder may use it."""

    state_root: Path
    config_path: Path
    token: str
    events: EventBus
    supervisor: Supervisor
    tools: ToolListings
    contexts: ContextBuilder
    watcher: AppsFolderWatcher
    speak: bool  # say replies aloud


@dataclass
class Composed:
    """What the launch serves, starts once ready, and stops."""

    app: Flask
    threads: int  # the API server's worker threads
    scheduler: Scheduler
    speaker: Speaker
    summarizer: BackgroundSummarizer
    llm: LLMClient  # the owner's model


def compose(core: Core, settings: Settings) -> Composed:
    """Build every part, in the order a request meets them."""
    build_models()  # before the server's threads first use them
    store = SettingsStore(user_settings_path(core.state_root), settings)
    core.contexts.default_language = lambda: store.get().ui_language
    llm = LLMClient(settings)
    store.subscribe(llm.reconfigure)
    user_settings = UserSettings(core.state_root, store.get)
    store.subscribe(user_settings.owner_changed)
    sessions = SessionStore(core.state_root / "sessions")
    summarizer = BackgroundSummarizer(llm)
    policy = build_permissions(core, store)
    confirmations = build_confirmations(core, settings)
    # the controller's own model calls for a request: its user's model, as the app's
    model_of = partial(model_for, owner=llm, client_for=user_settings.client_for)
    router = build_router(core, llm, lambda: model_of(served_user()))
    pipeline = build_pipeline(
        core, store, router, sessions, policy, confirmations, summarizer, model_of
    )
    admission = Admission(settings.admission)
    instructions = Instructions(
        pipeline,
        admission,
        core.contexts,
        sessions,
        core.supervisor.app_infos,
        confirmations,
    )
    speaker, voice_routes = build_voice(core, store, instructions)
    scheduler = build_jobs(core, pipeline, policy, confirmations, instructions)
    chat = ChatService(instructions, core.events, UsageMeter())
    routes = [
        *voice_routes,
        schedules_blueprint(scheduler, user_for_token=core.supervisor.user_for_token),
        openai_blueprint(
            chat,
            desktop_token=core.token,
            settings=store.get,
            scheduler=scheduler,
            state_root=core.state_root,
            user_settings=user_settings,
        ),
        toolbox_blueprint(
            AppToolbox(core.supervisor, policy, store.get, core.tools, core.state_root)
        ),
    ]
    app = build_api(
        core,
        store,
        llm,
        pipeline,
        admission,
        confirmations,
        routes,
        user_settings,
        meter=chat.meter,
    )
    # running and queued instructions, plus room for event streams, health checks,
    # opens and actions of other apps
    threads = admission.threads_needed + 16
    return Composed(app, threads, scheduler, speaker, summarizer, llm)


def build_router(
    core: Core, llm: LLMClient, current: Callable[[], LLMClient] | None = None
) -> Router:
    """Words first, then a skill's summary (the skills the request's user may use),
    then the model (`current()`: the model of the request's user, else `llm`);
    `triton/<app_id>` over /v1 addresses one app without routing."""

    def skills() -> list[dict[str, Any]]:
        skills = core.tools.listing("", served_user()).providers.get("skills", {})
        listing = skills.get("skills")
        return listing if isinstance(listing, list) else []

    return AddressedRouter(
        FallbackRouter(
            SkillRouter(DeterministicRouter(), skills), LLMRouter(llm, current=current)
        )
    )


def build_permissions(core: Core, store: SettingsStore) -> PermissionPolicy:
    """The review of every plan: which steps are risky, which rules the user set."""

    def manifest_whitelist(app_id: str) -> list[str] | None:
        manifest = core.supervisor.spec(app_id).manifest
        return manifest.shell_whitelist if manifest else None

    return PermissionPolicy(
        core.state_root / "permissions.json",
        store.get,
        manifest_whitelist,
        core.tools.entries,
    )


def build_confirmations(core: Core, settings: Settings) -> ConfirmationGate | None:
    """The pause before a risky step (config `permissions.confirm`, on by default)."""
    if not settings.permissions.confirm:
        return None
    return ConfirmationGate(core.state_root / "confirmations", core.events)


def build_pipeline(
    core: Core,
    store: SettingsStore,
    router: Router,
    sessions: SessionStore,
    policy: PermissionPolicy,
    confirmations: ConfirmationGate | None,
    summarizer: BackgroundSummarizer,
    model_of: Callable[[str], LLMClient] | None = None,
) -> Pipeline:
    """Route, hand each task to its app, run its steps through the executor."""
    supervisor = core.supervisor
    return Pipeline(
        router=router,
        apps=supervisor,
        run_steps=lambda body, timeout: supervisor.executor_client.run(body, timeout),
        contexts=core.contexts,
        sessions=sessions,
        events=core.events,
        limits=_limits(store),
        on_turn=partial(_summarise_later, summarizer, sessions, model_of),
        permissions=policy,
        confirmations=confirmations,
    )


def build_voice(
    core: Core, store: SettingsStore, instructions: Instructions
) -> tuple[Speaker, list[Blueprint]]:
    """Speech in (an instruction like a typed one) and out (replies spoken)."""
    speaker = Speaker(store.get())
    recognizer = Recognizer(store.get(), core.supervisor.profiles)
    store.subscribe(speaker.configure)
    store.subscribe(recognizer.configure)
    if core.speak:
        follow_speak_events(core.events, speaker)
    routes = [
        speech_blueprint(speaker),
        voice_blueprint(recognizer, instructions.instruct, instructions.language),
    ]
    return speaker, routes


def build_jobs(
    core: Core,
    pipeline: Pipeline,
    policy: PermissionPolicy,
    confirmations: ConfirmationGate | None,
    instructions: Instructions,
) -> Scheduler:
    """Jobs that run an instruction or a command later, or again."""
    supervisor = core.supervisor

    def run_steps(body: dict[str, Any], timeout: float) -> dict[str, Any]:
        # the executor knows an app (its workdir, whitelists) only while it runs: the
        # process serving the job's user
        user = str(body.get("user_id") or "") or OWNER
        supervisor.ensure_running(str(body.get("app_id") or ""), user_id=user)
        return supervisor.executor_client.run(body, timeout)

    def cancel_session(session_id: str) -> int:
        infos = supervisor.app_infos()
        return sum(pipeline.cancels.cancel_app(info.id, session_id) for info in infos)

    return build_scheduler(
        core.state_root,
        run_steps=run_steps,
        events=core.events,
        policy=policy,
        instruct=lambda text, session_id, language: instructions.instruct(
            text, session_id, "text", language
        ),
        spec_of=supervisor.spec,
        confirmations=confirmations,
        cancel_session=cancel_session,
        # a job has no desktop session: its own language, else the settings'
        language=lambda: instructions.language(None),
        # an agent job's session is its user's: it works in their sandbox
        claim_session=lambda sid, user: instructions.keep_note(sid, USER_KEY, user),
    )


def build_api(
    core: Core,
    store: SettingsStore,
    llm: LLMClient,
    pipeline: Pipeline,
    admission: Admission,
    confirmations: ConfirmationGate | None,
    routes: list[Blueprint],
    user_settings: UserSettings | None = None,
    meter: UsageMeter | None = None,
) -> Flask:
    """The desktop's API, with the routes of the parts beside the controller; the
    apps' model calls count toward the requests `meter` measures."""
    supervisor = core.supervisor
    # apps may reach the model and their own jobs with their own tokens
    authenticate = allow_app_tokens_for_schedule(
        allow_app_tokens_for_llm(token_matches(core.token), supervisor.app_for_token),
        supervisor.app_for_token,
    )
    installs = AppInstalls(
        apps_dir=core.watcher.apps_dir,
        workspaces=StateDir(core.state_root).workspaces_dir,
        rescan=core.watcher.rescan,
        app_infos=supervisor.app_infos,
    )
    own_routes = [
        llm_blueprint(
            llm,
            events=core.events,
            tool_listing=core.tools.entries,
            plan_listing=core.tools.listing,
            run_steps=lambda body, timeout: supervisor.executor_client.run(body, timeout),
            user_for_token=supervisor.user_for_token,
            client_for_user=user_settings.client_for if user_settings else None,
            meter=meter,
            own_call=supervisor.own_call,
        ),
        tools_blueprint(
            core.tools,
            installed=lambda app_id: app_id in supervisor.installed(),
            ensure_running=supervisor.ensure_running,
        ),
        tasks_blueprint(pipeline.cancels),
        about_blueprint(),
        installs_blueprint(installs),
        layout_blueprint(LayoutStore(core.state_root)),
    ]
    return create_app(
        ApiServices(
            token=core.token,
            pipeline=pipeline,
            apps=supervisor,
            events=core.events,
            settings=store,
            store_ui_snapshot=partial(
                supervisor.executor_client.set_system_cache, "ui_snapshot"
            ),
            executor_status=supervisor.executor_status,
            llm_status=llm.status,
            state_problems=partial(state_problems, core.state_root, core.config_path),
            authenticate=authenticate,
            blueprints=[*own_routes, *routes],
            admission=admission,
            confirmations=confirmations,
        )
    )


def _limits(store: SettingsStore) -> Callable[[], PipelineLimits]:
    """The pipeline's limits, read several times per instruction: built again only
    when the settings were replaced (PUT /api/settings)."""
    latest: list[tuple[Settings, PipelineLimits]] = []

    def limits() -> PipelineLimits:
        current = store.get()
        if not latest or latest[0][0] is not current:
            made = PipelineLimits(
                max_step_rounds=current.max_step_rounds,
                app_timeout=current.app_timeout,
                step_timeout=current.timeout_for,
            )
            latest[:] = [(current, made)]
        return latest[0][1]

    return limits


def _summarise_later(
    summarizer: BackgroundSummarizer,
    sessions: SessionStore,
    model_of: Callable[[str], LLMClient] | None,
    session: Session,
) -> None:
    """Ask the model (`model_of(user)`: the session's user's), in the background, to
    condense a session's history once it is long enough; without a model nothing is
    asked."""
    model = model_of(session_user(session)) if model_of is not None else None
    if not (model.configured if model is not None else summarizer.enabled):
        return
    asked = (turn for turn in session.history if turn.get("kind") == "instruction")
    if next(islice(asked, LLM_SUMMARY_MIN_TURNS - 1, None), None) is None:
        return
    session_id = session.session_id

    def keep(text: str) -> None:
        with sessions.lock(session_id):
            current = sessions.get(session_id)
            if current is not None and text:
                current.context["llm_summary"] = text
                sessions.save(current)

    summarizer.submit(session_id, session.history, keep, model)
