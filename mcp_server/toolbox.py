"""One app's toolbox for a caller outside any plan: `aios mcp` (mcp_server/stdio.py).

`AppToolbox` lists an app's tools and runs one tool call for it, the way a planned
step runs: the app is started first (its `@tool` methods are registered with the
executor only while it runs), the call is reviewed by the controller's
`PermissionPolicy` (a tool whose entry `requires_confirmation`, overwriting a file the
app did not create, SQL that writes, a program outside the whitelist when asking is
on; "allow always" rules count as the user's yes), and a call that would need the
user's yes is refused with `needs_confirmation` unless config.json
`mcp_out.allow_confirmed_tools` names the tool. An accepted call is a one-step plan on
the executor's `/run` (master token): the executor's schema check, workdir
confinement, whitelists, caps and audit log apply as for any step; no program
outside the whitelist is approved. `toolbox_blueprint` serves it to the desktop's
token: `GET /api/toolbox/<app_id>[?user_id=U]` (the listing as that user may call
it, app started) and
`POST /api/toolbox/<app_id>/call` with `{"tool", "args", "session_id", "user_id"}`
(a `ToolResult`; `user_id` names the user whose sandbox the call works in, the
owner's when absent). The same `AppToolbox` runs in-process when `aios mcp` starts the
services itself.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from aios_protocol.errors import BadAppReply, Forbidden, NeedsConfirmation
from aios_protocol.messages import ToolCall
from aios_runtime.settings import Settings
from aios_runtime.users import OWNER, check_user_id, user_app_workdir
from controller.api.tools import ToolListings
from controller.permissions.policy import PermissionPolicy

if TYPE_CHECKING:
    from flask import Blueprint

    from controller.clients import ExecutorClient
    from controller.pipeline.run import AppTarget

__all__ = ["AppToolbox", "toolbox_blueprint"]

_DESKTOP = "controller"  # the identity of the desktop's token (aios_runtime.edge)
_RUN_SLACK = 10.0  # seconds the executor's answer may take beyond the tool's timeout


class ToolboxApps(Protocol):
    """What `AppToolbox` needs of the supervisor."""

    executor_client: ExecutorClient

    def target(self, app_id: str, user_id: str = OWNER) -> AppTarget: ...

    def ensure_running(
        self, app_id: str, timeout: float | None = None, user_id: str = OWNER
    ) -> None: ...


class AppToolbox:
    """Listings and single calls for apps (see the module text)."""

    def __init__(
        self,
        apps: ToolboxApps,
        policy: PermissionPolicy,
        settings: Callable[[], Settings],
        listings: ToolListings,
        state_root: Path | None = None,
    ) -> None:
        self.apps = apps
        self.policy = policy
        self.settings = settings
        self.listings = listings
        self.state_root = state_root  # where the users' sandboxes are

    def listing(self, app_id: str, user_id: str | None = None) -> dict[str, Any]:
        """The app's executor listing (`ToolsListing` as a dict) once it was started,
        as `user_id` (the owner when absent) may call it, with
        `allow_confirmed_tools`; raises `AppUnavailable` when it cannot run."""
        user = check_user_id(user_id, field="user_id") if user_id else OWNER
        self.apps.target(app_id)
        listing = self.listings.listing(app_id, user).dump()
        return {**listing, "allow_confirmed_tools": sorted(self.allowed())}

    def allowed(self) -> frozenset[str]:
        return frozenset(self.settings().mcp_out.allow_confirmed_tools)

    def call(
        self,
        app_id: str,
        tool: str,
        args: dict[str, Any],
        session_id: str | None = None,
        user_id: str | None = None,
    ) -> dict[str, Any]:
        """Run `tool` for `app_id`: the `ToolResult` as a dict (failures included);
        raises `NeedsConfirmation` or `AppUnavailable` before anything runs."""
        user = check_user_id(user_id, field="user_id") if user_id else OWNER
        # the app's process serving that user runs its own tools for them
        target = self.apps.target(app_id, user)
        workdir = Path(target.workdir) if target.workdir else None
        if user != OWNER and self.state_root is not None:
            workdir = user_app_workdir(self.state_root, user, app_id)
        step = {"step_id": 1, "tool": tool, "args": args}
        review = self.policy.review(app_id, workdir, [step], user=user)
        if review.risky and tool not in self.allowed():
            reasons = "; ".join(r.sentence for r in review.risky)
            raise NeedsConfirmation(
                f"{tool} needs the user's yes ({reasons}); config.json "
                "mcp_out.allow_confirmed_tools may allow it for MCP"
            )
        body = {"steps": [step], "app_id": app_id, "session_id": session_id}
        if user != OWNER:  # that user's sandbox (the executor confines the call to it)
            body["user_id"] = user
        timeout = self.settings().timeout_for(tool) + _RUN_SLACK
        answer = self.apps.executor_client.run(body, timeout)
        results = answer.get("tool_results") if isinstance(answer, dict) else None
        if not isinstance(results, dict) or len(results) != 1:
            raise BadAppReply("the executor's answer has no single tool result")
        if review.new_files:
            self.policy.record_created(app_id, review.new_files, results, user=user)
        result = next(iter(results.values()))
        if not isinstance(result, dict):
            raise BadAppReply("the executor's tool result is not an object")
        return result


def toolbox_blueprint(toolbox: AppToolbox) -> Blueprint:
    """The toolbox routes, for the desktop's token only (module text)."""
    from flask import Blueprint, g, request  # imported when the API is served

    from aios_runtime.edge import read_json

    routes = Blueprint("toolbox", __name__)

    def desktop_only() -> None:
        if g.get("identity") != _DESKTOP:
            raise Forbidden("only the desktop's token may use an app's toolbox")

    @routes.get("/api/toolbox/<app_id>")
    def listing(app_id: str) -> dict[str, Any]:
        desktop_only()
        return toolbox.listing(app_id, request.args.get("user_id"))

    @routes.post("/api/toolbox/<app_id>/call")
    def call(app_id: str) -> dict[str, Any]:
        desktop_only()
        body = read_json(ToolCall)
        return toolbox.call(app_id, body.tool, body.args, body.session_id, body.user_id)

    return routes
