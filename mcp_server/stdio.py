"""`aios mcp --app APP_ID [--user USER_ID]`: one app's toolbox served over stdio to any MCP host.

Every call works in the sandbox of one user (`--user`, default the owner): that
user's workdir of the app, as for that user's own instructions.

The toolbox is the app's executor listing: the atomic tools, the configured MCP
servers' tools and the app's own `@tool` methods, each with its schema. Every call
goes through `mcp_server.toolbox.AppToolbox`, the way a planned step runs: the
controller's permission review (a call that needs the user's yes is refused with
`needs_confirmation`, since there is no one to ask, unless config.json
`mcp_out.allow_confirmed_tools` names the tool), then a one-step plan on the
executor (schema check, workdir confinement, whitelists, caps, audit log in
`<state_dir>/tool_calls/`). Where that toolbox lives depends on the state folder:

- the system runs there (a live `controller.pid`, its `token` and `ports.json`): the
  controller's `/api/toolbox/<app_id>` routes, with the desktop's token, so the one
  executor and the one app process of the running system serve the calls (its
  config.json decides what is allowed);
- it does not: `PrivateServices` starts what is needed with the controller's own
  `Supervisor`: the executor and the app's process (the same command, environment
  and confinement as under the controller; the app's custom tools registered from
  its `/manifest`), stopped when the host disconnects. Every child dies with this
  process (death signal, and the launch's reaper), so a `kill -9` of `aios mcp`
  leaves nothing behind.

The MCP side is the official `mcp` package's low-level `Server` over
`mcp.server.stdio.stdio_server`; nothing but MCP goes to stdout.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from aios_protocol.errors import AiosError, InvalidRequest
from aios_runtime.settings import AppsSettings, Settings, load_settings
from aios_runtime.users import OWNER, check_user_id
from controller.api.tools import ToolListings
from controller.apps.discovery import AppSpec, discover_apps
from controller.apps.ports import PortAssigner
from controller.apps.processes import ExecutorLaunch
from controller.apps.supervisor import Supervisor
from controller.clients import json_call
from controller.permissions.policy import PermissionPolicy
from controller.state_dir import StateDir
from mcp_server.toolbox import AppToolbox

__all__ = ["ControllerToolbox", "PrivateServices", "serve_app_over_mcp"]

_CALL_SLACK = 15.0  # seconds beyond the tool's own timeout an HTTP call may wait
_READY_TIMEOUT = 60.0  # seconds the private executor and app may take to start


class ServedToolbox(Protocol):
    """One app's tools as `aios mcp` serves them."""

    def listing(self, user_id: str = OWNER) -> dict[str, Any]:
        """`ToolsListing` as a dict (what `user_id` may call), plus
        `allow_confirmed_tools`."""
        ...

    def call(
        self, tool: str, args: dict[str, Any], session_id: str, user_id: str
    ) -> dict[str, Any]:
        """A `ToolResult` as a dict; raises `AiosError` when the call was refused."""
        ...


class ControllerToolbox:
    """The running system's toolbox routes for one app (desktop token)."""

    def __init__(self, url: str, token: str, app_id: str, settings: Settings) -> None:
        self.url, self.token, self.app_id = url.rstrip("/"), token, app_id
        self.settings = settings

    def listing(self, user_id: str = OWNER) -> dict[str, Any]:
        query = f"?user_id={quote(user_id, safe='')}" if user_id != OWNER else ""
        return json_call(
            "GET",
            f"{self.url}/api/toolbox/{self.app_id}{query}",
            token=self.token,
            timeout=_READY_TIMEOUT,
            what="the controller",
        )

    def call(
        self, tool: str, args: dict[str, Any], session_id: str, user_id: str
    ) -> dict[str, Any]:
        body = {"tool": tool, "args": args, "session_id": session_id, "user_id": user_id}
        return json_call(
            "POST",
            f"{self.url}/api/toolbox/{self.app_id}/call",
            body,
            token=self.token,
            what="the controller",
            timeout=self.settings.timeout_for(tool) + _CALL_SLACK,
        )


def running_controller(state_dir: Path) -> tuple[str, str] | None:
    """The URL and desktop token of the system running from `state_dir`, or None."""
    state = StateDir(state_dir)
    if state.running_pid() is None:
        return None
    url, token = state.controller_url(), state.read_token()
    return (url, token) if url and token else None


class PrivateServices:
    """The executor and one app's process for `aios mcp`, run by a `Supervisor`."""

    def __init__(
        self, spec: AppSpec, settings: Settings, config_path: Path | None, state_dir: Path
    ) -> None:
        self.app_id = spec.app_id
        self.settings = settings
        self.listings = ToolListings(
            lambda app_id: self.supervisor.executor_client.tool_listing(app_id),
            fetch_for_user=lambda app_id, user: (
                self.supervisor.executor_client.tool_listing(app_id, user)
            ),
        )
        self.supervisor = Supervisor(
            specs=[spec],
            ports=PortAssigner(),
            executor=ExecutorLaunch(
                config_path=config_path or state_dir / "config.json", state_dir=state_dir
            ),
            logs_dir=state_dir / "logs" / f"mcp-out-{spec.app_id}",
            controller_url="",  # no controller: the app's controller calls fail clearly
            app_settings=settings.app_settings,
            config=settings.supervisor,
            app_sandbox=settings.app_sandbox,
            on_registered=self._registered,
            # the app runs while the host is connected: started now, never idle-stopped
            # one app: a template to fork it from would cost more than it saves
            apps=AppsSettings(
                idle_stop_s=0.0, start_at_launch=True, fork_from_template=False
            ),
        )
        manifest = spec.manifest
        policy = PermissionPolicy(
            state_dir / "permissions.json",
            lambda: settings,
            lambda app_id: manifest.shell_whitelist if manifest else None,
            self.listings.entries,
        )
        self.toolbox = AppToolbox(
            self.supervisor, policy, lambda: settings, self.listings, state_dir
        )

    def start(self) -> None:
        """Start the executor and the app (from this long-lived thread: the children's
        death signal follows it); raises `StartupFailed` when the executor does not."""
        self.supervisor.start()
        self.supervisor.wait_settled(_READY_TIMEOUT)
        self.supervisor.ensure_running(self.app_id, _READY_TIMEOUT)

    def stop(self) -> None:
        self.supervisor.stop()

    def listing(self, user_id: str = OWNER) -> dict[str, Any]:
        return self.toolbox.listing(self.app_id, user_id)

    def call(
        self, tool: str, args: dict[str, Any], session_id: str, user_id: str
    ) -> dict[str, Any]:
        return self.toolbox.call(self.app_id, tool, args, session_id, user_id)

    # ------------------------------------------------------------------- MCP side

    def _registered(self, app_id: str, listing: dict[str, Any] | None) -> None:
        """The app (re)registered: every listing goes (the one app's tools are in all
        of them), and the executor's answer stands for that app's."""
        self.listings.invalidate(None)
        self.listings.registered(app_id, listing)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _error_result(code: str, message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"[{code}] {message}")], is_error=True
    )


class McpBridge:
    """MCP tools and calls over one `ServedToolbox`."""

    def __init__(self, toolbox: ServedToolbox, app_id: str, user_id: str = OWNER) -> None:
        self.toolbox, self.app_id, self.user_id = toolbox, app_id, user_id
        self.session_id = f"mcp_{app_id}_{int(time.time())}"

    def mcp_tools(self) -> list[types.Tool]:
        listing = self.toolbox.listing(self.user_id)
        allowed = set(listing.get("allow_confirmed_tools") or [])
        tools = []
        for entry in listing.get("tools", []):
            if not entry.get("available", True):
                continue
            description = entry.get("description") or ""
            if entry.get("requires_confirmation") and entry["name"] not in allowed:
                description += (
                    " (needs the user's yes: refused over MCP unless config.json "
                    "mcp_out.allow_confirmed_tools lists it)"
                )
            annotations = types.ToolAnnotations(
                read_only_hint=entry.get("risk_level") == "read",
                open_world_hint=entry.get("risk_level") == "network",
            )
            tools.append(
                types.Tool(
                    name=entry["name"],
                    description=description,
                    input_schema=entry.get("input_schema") or {"type": "object"},
                    annotations=annotations,
                )
            )
        return tools

    def call(self, tool: str, args: dict[str, Any]) -> types.CallToolResult:
        """One call; refusals and failures as error results."""
        try:
            result = self.toolbox.call(tool, args, self.session_id, self.user_id)
        except AiosError as exc:
            return _error_result(exc.code, exc.message)
        if result.get("status") != "ok":
            return _error_result(
                str(result.get("code") or "tool_failed"),
                str(result.get("error") or "the tool failed"),
            )
        value = result.get("result")
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=_text(value))],
            structured_content=value if isinstance(value, dict) else None,
        )


def _mcp_server(bridge: McpBridge) -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=await anyio.to_thread.run_sync(bridge.mcp_tools))

    async def call_tool(
        ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        args = dict(params.arguments or {})
        return await anyio.to_thread.run_sync(bridge.call, params.name, args)

    return Server(
        f"triton-aios-{bridge.app_id}",
        instructions=f"The tools of the Triton AIOS app {bridge.app_id}, confined to its workdir.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _serve(bridge: McpBridge) -> None:
    server = _mcp_server(bridge)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


def serve_app_over_mcp(
    app_id: str,
    *,
    apps_dir: Path,
    config_path: Path | None,
    state_dir: Path,
    user_id: str = OWNER,
) -> int:
    """Serve `app_id`'s toolbox on stdin/stdout until the host disconnects (exit
    status), every call in `user_id`'s sandbox."""
    user_id = check_user_id(user_id, field="--user")
    settings = load_settings(config_path)
    live = running_controller(state_dir)
    if live is not None:
        toolbox = ControllerToolbox(*live, app_id, settings)
        toolbox.listing(user_id)  # the app is known and runs there, or a clear error now
        _serve(McpBridge(toolbox, app_id, user_id))
        return 0
    state = StateDir(state_dir)
    state.create()  # an older layout's workdirs move into the owner's sandbox first
    workspaces = state.workspaces_dir
    specs = {s.app_id: s for s in discover_apps(apps_dir, workspaces=workspaces)}
    spec = specs.get(app_id)
    if spec is None:
        raise InvalidRequest(f"no app {app_id!r} in {apps_dir}")
    if not spec.ok:
        raise InvalidRequest(f"app {app_id!r} cannot be used: {spec.error}")
    services = PrivateServices(spec, settings, config_path, state_dir)
    try:
        services.start()
        services.listing(user_id)  # the app runs, or a clear error now
        _serve(McpBridge(services, app_id, user_id))
    finally:
        services.stop()
    return 0
