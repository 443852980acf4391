"""The MCP servers of config.json as providers, and a shared server's one run per user.

`mcp_providers` makes one provider per `mcp_servers` entry: a `McpProvider` (one
process) for a server that is the owner's (another user's call is refused) or that
is `shared` and says it touches no files (`touches_files: false`: one run serves
everyone); a `McpUsers` for a shared server that touches files. `McpUsers` runs it
once per user, started at that user's first call (the owner's at the executor's
start, whose answer is the listing everyone sees), with the folder
`<state_dir>/users/<user_id>/workspaces/.mcp/<server>/` of that user's sandbox as its
working folder, the only one it may write; the other users' folders and the state
folder stay hidden from it under bubblewrap. At most `max_runs` other users' runs
are kept (the owner's aside): a new user's first call stops the run of the user
whose last call is the oldest and who has none under way; that user's next call
starts it again, their folder as they left it. Every run stops with the provider.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from aios_protocol.errors import ToolFailed
from aios_runtime.settings import Settings
from aios_runtime.users import OWNER, private_folder, workspaces_root
from executor.providers.base import ToolCall, ToolEntry, ToolProvider
from executor.providers.mcp import (
    McpProvider,
    McpRuntime,
    McpServerConfig,
    server_prompt,
)
from executor.providers.registry import ToolSource, ToolUnavailable
from executor.sandbox.pids_cgroup import PidsCgroups

__all__ = [
    "MAX_USER_RUNS",
    "SERVERS_FOLDER",
    "McpUsers",
    "add_mcp_servers",
    "mcp_providers",
    "server_folder",
]

MAX_USER_RUNS = 8  # other users' runs of one server kept at once, the owner's aside
# in a user's `workspaces/`: never an app's id (no app id starts with a dot)
SERVERS_FOLDER = ".mcp"


def server_folder(state_dir: Path, user_id: str, server: str) -> Path:
    """The working folder of `server`'s run for `user_id`, made (mode 700) if need be."""
    folder = workspaces_root(state_dir, user_id) / SERVERS_FOLDER / server
    return private_folder(folder, f"the folder of MCP server {server} for {user_id}")


class McpUsers(ToolProvider):
    """A shared MCP server that touches files: one run per user (module text)."""

    def __init__(
        self,
        config: McpServerConfig,
        runtime: McpRuntime,
        state_dir: Path,
        *,
        max_runs: int = MAX_USER_RUNS,
    ) -> None:
        super().__init__(config)
        self.name = f"mcp:{config.name}"
        self.runtime = runtime
        self.state_dir = state_dir
        self.max_runs = max_runs
        self._runs: dict[str, McpProvider] = {}
        self._used: dict[str, float] = {}  # user → when their last call ended
        self._busy: dict[str, int] = {}  # user → their calls under way
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def declared_tools(cls, config: McpServerConfig) -> list[ToolEntry]:
        return McpProvider.declared_tools(config)

    def _run_for(self, user_id: str, *, busy: bool = False) -> McpProvider:
        """`user_id`'s run of the server, made and started on first use (`busy`:
        counted as a call under way until `_done`)."""
        evicted: McpProvider | None = None
        with self._lock:
            if self._closed:
                raise ToolUnavailable(f"MCP server {self.config.name} is stopped")
            run = self._runs.get(user_id)
            fresh = run is None
            if run is None:
                folder = server_folder(self.state_dir, user_id, self.config.name)
                run = self._runs[user_id] = McpProvider(
                    self.config, self.runtime, user_id=user_id, workdir=folder
                )
                evicted = self._evict(user_id)
            if busy:
                self._busy[user_id] = self._busy.get(user_id, 0) + 1
        if evicted is not None:
            threading.Thread(target=evicted.stop, name=f"stop-{self.name}").start()
        if fresh:
            run.start(wait=0)
        return run

    def _evict(self, newcomer: str) -> McpProvider | None:
        """Over `max_runs`: the run to stop (taken out), of the user other than the
        owner and `newcomer` with no call under way whose last call is the oldest.
        Called with the lock held."""
        others = [u for u in self._runs if u not in (OWNER, newcomer)]
        if len(others) < self.max_runs:
            return None
        idle = [u for u in others if not self._busy.get(u)]
        if not idle:
            return None
        oldest = min(idle, key=lambda u: self._used.get(u, 0.0))
        self._used.pop(oldest, None)
        return self._runs.pop(oldest)

    def _done(self, user_id: str) -> None:
        with self._lock:
            self._busy[user_id] = max(0, self._busy.get(user_id, 1) - 1)
            self._used[user_id] = time.monotonic()

    def runs(self) -> dict[str, McpProvider]:
        """The runs started so far, by user."""
        with self._lock:
            return dict(self._runs)

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Start the owner's run (its listing is the one everyone sees)."""
        try:
            run = self._run_for(OWNER)
        except ToolFailed as exc:
            self._state, self._error = "failed", exc.message
            return
        run.wait_ready(self.config.settings.start_timeout)

    def stop(self) -> None:
        with self._lock:
            self._closed = True
            runs = list(self._runs.values())
        for run in runs:
            run.stop()
        self._state = "stopped"

    def status(self) -> dict[str, Any]:
        owner = self.runs().get(OWNER)
        state = owner.status() if owner is not None else super().status()
        return {**state, "users": sorted(self.runs())}

    def status_for(self, user_id: str = OWNER) -> dict[str, Any]:
        """The status without the other users' names."""
        status = self.status()
        status["users"] = [u for u in status["users"] if u == user_id]
        return status

    def tools(self) -> list[ToolEntry]:
        owner = self.runs().get(OWNER)
        return owner.tools() if owner is not None else []

    def prompt_text(self) -> str:
        return server_prompt(self.config.name)

    # ----------------------------------------------------------------- calls

    def call(self, call: ToolCall) -> Any:
        """Run `call` on the run of the user it acts for (started now if need be)."""
        user = call.app.user_id
        run = self._run_for(user, busy=True)
        try:
            if not run.wait_ready(self.config.settings.start_timeout):
                status = run.status()
                why = f": {status['error']}" if status.get("error") else ""
                raise ToolUnavailable(
                    f"MCP server {self.config.name} is {status['state']} for {user}{why}"
                )
            return run.call(call)
        finally:
            self._done(user)


def mcp_providers(
    settings: Settings, runtime: McpRuntime, state_dir: Path
) -> list[ToolProvider]:
    """One provider per config.json `mcp_servers` entry (not started; module text)."""
    providers: list[ToolProvider] = []
    for name, server in settings.mcp_servers.items():
        config = McpServerConfig(name, server)
        if server.shared and server.touches_files:
            providers.append(McpUsers(config, runtime, state_dir))
        else:
            providers.append(McpProvider(config, runtime))
    return providers


def add_mcp_servers(
    tools: ToolSource,
    settings: Settings,
    *,
    state_dir: Path,
    hidden_dirs: list[str],
    log_dir: Path,
) -> list[ToolProvider]:
    """Add one provider per configured server to `tools` and start each in the
    background (the listing shows its declared tools until it answers)."""
    runtime = McpRuntime(
        hidden_dirs=tuple(hidden_dirs),
        log_dir=log_dir,
        use_bubblewrap=settings.tool_sandbox.use_bubblewrap,
        max_message_bytes=settings.limits.response_bytes,
        memory_bytes=settings.limits.memory_bytes,
        file_size_bytes=settings.limits.file_size_bytes,
        tasks=settings.limits.tasks_per_run,
        # the executor's own pids hierarchy (`<root>/triton-aios/<pid>`), swept likewise
        cgroups=PidsCgroups.detect(settings.limits.tasks_per_run)
        if settings.mcp_servers
        else None,
    )
    providers = mcp_providers(settings, runtime, state_dir)
    for provider in providers:
        tools.add(provider, start=False)
        threading.Thread(
            target=provider.start, name=f"start-{provider.name}", daemon=True
        ).start()
    return providers
