"""The MCP servers of config.json as providers, and a shared server's one run per user.

`mcp_providers` makes one provider per `mcp_servers` entry: a `McpProvider` (one
process) for a server that is the owner's (another user's call is refused) or that
is `shared` and says it touches no files (`touches_files: false`: one run serves
everyone); a `McpUsers` for a shared server that touches files. `McpUsers` runs it
once per user, started at that user's first call (the owner's at the executor's
start, whose answer is the listing everyone sees), with the folder
`<state_dir>/users/<user_id>/workspaces/.mcp/<server>/` of that user's sandbox as its
working folder, the only one it may write; the other users' folders and the state
folder stay hidden from it under bubblewrap. Every run stops with the provider.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from aios_protocol.errors import ToolFailed
from aios_runtime.settings import Settings
from aios_runtime.users import OWNER, workspaces_root
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
    "SERVERS_FOLDER",
    "McpUsers",
    "add_mcp_servers",
    "mcp_providers",
    "server_folder",
]

SERVERS_FOLDER = (
    ".mcp"  # in a user's `workspaces/`: never an app's id (no app id starts with a dot)
)


def server_folder(state_dir: Path, user_id: str, server: str) -> Path:
    """The working folder of `server`'s run for `user_id`, made (mode 700) if need be."""
    folder = workspaces_root(state_dir, user_id) / SERVERS_FOLDER / server
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise ToolFailed(
            f"the folder of MCP server {server} for {user_id} cannot be made: {exc}"
        ) from exc
    return Path(os.path.realpath(folder))


class McpUsers(ToolProvider):
    """A shared MCP server that touches files: one run per user (module text)."""

    def __init__(
        self, config: McpServerConfig, runtime: McpRuntime, state_dir: Path
    ) -> None:
        super().__init__(config)
        self.name = f"mcp:{config.name}"
        self.runtime = runtime
        self.state_dir = state_dir
        self._runs: dict[str, McpProvider] = {}
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def declared_tools(cls, config: McpServerConfig) -> list[ToolEntry]:
        return McpProvider.declared_tools(config)

    def _run_for(self, user_id: str) -> McpProvider:
        """`user_id`'s run of the server, made and started on first use."""
        with self._lock:
            if self._closed:
                raise ToolUnavailable(f"MCP server {self.config.name} is stopped")
            run = self._runs.get(user_id)
            if run is not None:
                return run
            folder = server_folder(self.state_dir, user_id, self.config.name)
            run = self._runs[user_id] = McpProvider(
                self.config, self.runtime, user_id=user_id, workdir=folder
            )
        run.start(wait=0)
        return run

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
        run = self._run_for(user)
        if not run.wait_ready(self.config.settings.start_timeout):
            status = run.status()
            why = f": {status['error']}" if status.get("error") else ""
            raise ToolUnavailable(
                f"MCP server {self.config.name} is {status['state']} for {user}{why}"
            )
        return run.call(call)


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
