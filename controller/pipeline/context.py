"""Context injection: the `Context` handed to every call of an app's `handle`.

`role` comes from the manifest's `role_prompt` or `role.md`; `workdir` is absolute;
`cwd_state` holds the workspace's top-level `files` (bounded) merged with the state
the app keeps in the session's `agent_states` (an app sets it with the reply field
`state`, e.g. `{"last_played": "周杰伦 - 七里香"}`); `available_tools` are the tool
names the executor lists for that app (names only; the full entries are
`controller.api.tools.ToolListings`), cached per app and refreshed on re-registration,
or read each time from that one cached source;
`history_summary` is a deterministic summary of the session's last turns (until an
LLM summariser exists); `tool_results` is set on the call after steps ran; `upstream`
carries the results of the tasks a dependent task waits for;
`caller_system_prompt` the system prompt of the `/v1` request that asked (if any);
`language` the one the desktop last said it shows (kept in the session's context),
else `default_language()` (the settings' `ui_language`), else Chinese: `language_of`
decides it, for the apps' context and for the controller's own messages (`tr`).
A session belongs to one user (`session_user`: its context's `user_id`, else the
owner); for a user other than the owner `workdir` is that user's sandbox's and the
context carries `user_id`: the call goes to the app's process serving that user
alone, whose own tool calls the executor runs there too.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast, get_args

from aios_protocol.messages import ATOMIC_TOOLS, Context, Language
from aios_runtime.users import OWNER, Sandboxes
from controller.sessions import SessionView

__all__ = [
    "USER_KEY",
    "ContextBuilder",
    "language_of",
    "session_user",
    "summarise_history",
    "tr",
    "workspace_files",
]

MAX_FILES = 100
_LANGUAGES: tuple[str, ...] = get_args(Language)


# A directory's mtime changes whenever a name in it is added, removed or renamed, but
# only as finely as the kernel's clock tick: a listing is reused only if the folder
# had not changed for this long when it was read ("racy" listings are not kept).
_SETTLED_NS = 50_000_000
_listings: dict[str, tuple[int, list[str]]] = {}
_listings_lock = threading.Lock()

# how many sessions' history summaries are kept for reuse
SUMMARIES_KEPT = 256


def workspace_files(workdir: Path | None, limit: int = MAX_FILES) -> list[str]:
    """Sorted top-level names in the workspace, hidden ones left out, at most `limit`.

    Every call of an app carries this list, so the listing of a folder that has not
    changed since (same mtime) is reused instead of read again.
    """
    if workdir is None:
        return []
    key = os.fspath(workdir)
    try:
        mtime = os.stat(key).st_mtime_ns
    except OSError:
        return []
    with _listings_lock:
        cached = _listings.get(key)
    if cached is not None and cached[0] == mtime:
        return cached[1][:limit]
    read_at = time.time_ns()
    names: list[str] = []
    try:
        with os.scandir(key) as entries:
            for entry in entries:
                if not entry.name.startswith("."):
                    names.append(entry.name)
    except OSError:
        return []
    names.sort()
    if mtime < read_at - _SETTLED_NS:
        with _listings_lock:
            _listings[key] = (mtime, names)
    return names[:limit]


USER_KEY = "user_id"  # in session.context: the user the session belongs to


def session_user(session: SessionView | None) -> str:
    """The user a session belongs to (the owner when it names none)."""
    named = session.context.get(USER_KEY) if session is not None else None
    return named if isinstance(named, str) and named else OWNER


def language_of(session: SessionView | None, default: str = "") -> Language:
    """The language the user reads: the one the desktop last said for `session`,
    else `default` (the settings' `ui_language`; a message built without a session
    passes only this), else Chinese."""
    said = session.context.get("language") if session is not None else None
    for language in (said, default):
        if language in _LANGUAGES:
            return cast(Language, language)
    return "zh-CN"


def tr(language: str, zh: str, en: str) -> str:
    """The text for `language` (from `language_of`): `en` for English, else `zh`."""
    return en if language == "en-US" else zh


def summarise_history(session: SessionView) -> str:
    """`history_summary`: the LLM's summary of the session when one was written
    (in the background, `llm_summary`), else the deterministic "用户刚问过…"."""
    from controller.llm.summary import deterministic_summary

    return session.context.get("llm_summary") or deterministic_summary(session.history)


class ContextBuilder:
    """Builds `Context` objects; `list_tools(app_id)` asks the executor for names,
    `list_user_tools(app_id, user_id)` for the names another user may call (without
    it, that user is given the owner's).

    `summarise(session)` gives `history_summary` (an LLM summariser can replace the
    deterministic default).
    """

    def __init__(
        self,
        list_tools: Callable[[str], list[str]],
        summarise: Callable[[SessionView], str] = summarise_history,
        *,
        cache_tools: bool = True,
        list_user_tools: Callable[[str, str], list[str]] | None = None,
    ):
        self._list_tools = list_tools
        self._list_user_tools = list_user_tools
        # the settings' `ui_language` once the settings store exists ("" for none)
        self.default_language: Callable[[], str] = lambda: ""
        # False when `list_tools` is itself the controller's one cached source
        # (`controller.api.tools.ToolListings`): every consumer then sees its list
        self._cache_tools = cache_tools
        self.summarise = summarise
        # the users' sandboxes, once the launch knows the executor's master token
        self.sandboxes: Sandboxes | None = None
        self._tools: dict[tuple[str, str], list[str]] = {}
        self._lock = threading.Lock()
        # per session: (history length, its last turn, LLM summary) → the summary,
        # for the SUMMARIES_KEPT sessions summarised last
        self._summaries: dict[str, tuple[tuple[int, Any, Any], str]] = {}

    def language(self, session: SessionView | None) -> Language:
        """`language_of(session)`, falling back to the settings' `ui_language`."""
        return language_of(session, self.default_language())

    def available_tools(self, app_id: str, user_id: str = OWNER) -> list[str]:
        return list(self._tool_names(app_id, user_id))

    def _tool_names(self, app_id: str, user_id: str = OWNER) -> list[str]:
        """The cached names themselves (`Context` copies them), not to be changed."""
        if self._list_user_tools is None:
            user_id = OWNER
        key = (app_id, user_id)
        with self._lock:
            cached = self._tools.get(key)
        if cached is not None:
            return cached
        try:
            if user_id == OWNER or self._list_user_tools is None:
                names = self._list_tools(app_id)
            else:
                names = self._list_user_tools(app_id, user_id)
        except Exception:
            return list(ATOMIC_TOOLS)  # executor busy or restarting: not cached
        if self._cache_tools:
            with self._lock:
                self._tools[key] = list(names)
        return list(names)

    def _summary(self, session: SessionView) -> str:
        """`summarise(session)`, computed once per state of the history: every call
        of a steps loop (and every task of one instruction) sees the same history."""
        history = session.history
        key = (
            len(history),
            history[-1] if history else None,
            session.context.get("llm_summary"),
        )
        with self._lock:
            hit = self._summaries.get(session.session_id)
        if (
            hit is not None
            and hit[0][0] == key[0]
            and hit[0][1] is key[1]
            and hit[0][2] == key[2]
        ):
            return hit[1]
        text = self.summarise(session)
        with self._lock:
            self._summaries.pop(session.session_id, None)
            self._summaries[session.session_id] = (key, text)  # the latest last
            while len(self._summaries) > SUMMARIES_KEPT:  # the oldest go
                del self._summaries[next(iter(self._summaries))]
        return text

    def invalidate(self, app_id: str | None = None) -> None:
        """Forget cached tool names (after an app or the executor re-registered)."""
        with self._lock:
            if app_id is None:
                self._tools.clear()
            else:
                for key in [k for k in self._tools if k[0] == app_id]:
                    del self._tools[key]

    def build(
        self,
        *,
        app_id: str,
        role: str,
        workdir: Path | None,
        session: SessionView,
        tool_results: dict[str, Any] | None = None,
        upstream: list[dict[str, Any]] | None = None,
        step_round: int = 0,
        installed_apps: list[dict[str, Any]] | None = None,
    ) -> Context:
        """The context of one call; `step_round` counts the step plans already run
        for this request, `installed_apps` names the installed apps (`id`, `name`,
        `system_role`) for an app that tells the user about the others."""
        user = session_user(session)
        extra: dict[str, Any] = {}
        if user != OWNER and self.sandboxes is not None:
            workdir = self.sandboxes.workdir(user, app_id, workdir)
            extra["user_id"] = user
        cwd_state: dict[str, Any] = {"files": workspace_files(workdir)}
        cwd_state.update(session.agent_state(app_id))
        if upstream:
            extra["upstream"] = upstream
        if step_round:
            extra["step_round"] = step_round
        if installed_apps is not None:
            extra["installed_apps"] = installed_apps
        caller_prompt = session.context.get("caller_system_prompt")
        if caller_prompt:  # the system prompt of an OpenAI client's request (/v1)
            extra["caller_system_prompt"] = caller_prompt
        caller_turns = session.context.get("caller_max_turns")
        if caller_turns:  # the request's max_turns (/v1), within the app's own cap
            extra["caller_max_turns"] = caller_turns
        return Context(
            role=role,
            workdir=str(workdir) if workdir is not None else "",
            cwd_state=cwd_state,
            available_tools=self._tool_names(app_id, user),
            session_id=session.session_id,
            history_summary=self._summary(session),
            tool_results=tool_results,
            language=self.language(session),
            **extra,
        )
