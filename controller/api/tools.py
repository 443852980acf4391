"""The controller's view of the executor's tool listing, and `GET /api/tools?app_id=X`.

`ToolListings` is the controller's one source of tool lists: it asks the executor
(`GET /tools?app_id=X`) and keeps each answer for `ttl` seconds (or until
`invalidate`), so the injected `available_tools`, the LLM planner, the permission
policy and the desktop's Tools window all read the same list at any moment. Its
entries are `ToolInfo`s (name, description, provider, input_schema, risk_level,
requires_confirmation, concurrency_safe, max_result_size_chars, available,
unavailable_reason), and `providers` holds each provider's state (a failed one says
why). A listing is one user's (`user_id`, the owner by default): another user's is
fetched with `fetch_for_user`, and names only what that user may call.
`tools_blueprint(listings)` serves the listing to the desktop's token only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from aios_protocol.errors import Forbidden, NotFound
from aios_protocol.messages import ToolInfo, ToolsListing
from aios_runtime.users import OWNER

if TYPE_CHECKING:
    from flask import Blueprint

__all__ = ["LISTING_TTL", "ToolListings", "tools_blueprint"]

LISTING_TTL = 2.0  # seconds an executor answer is reused
_DESKTOP = "controller"  # the identity of the desktop's token (aios_runtime.edge)


class ToolListings:
    """Cached executor listings per app and user (`fetch(app_id)` → the owner's
    `/tools` answer as a dict, `fetch_for_user(app_id, user_id)` → another user's).

    `app_id` "" asks for the tools every app has. A failing fetch raises and caches
    nothing. Without `fetch_for_user` every user is given the owner's listing.
    """

    def __init__(
        self,
        fetch: Callable[[str], dict[str, Any]],
        *,
        ttl: float = LISTING_TTL,
        fetch_for_user: Callable[[str, str], dict[str, Any]] | None = None,
    ):
        self._fetch = fetch
        self._fetch_for_user = fetch_for_user
        self._ttl = ttl
        self._cached: dict[tuple[str, str], tuple[float, ToolsListing]] = {}
        self._lock = threading.Lock()

    def listing(self, app_id: str, user_id: str = OWNER) -> ToolsListing:
        if user_id != OWNER and self._fetch_for_user is None:
            user_id = OWNER
        key = (app_id, user_id)
        now = time.monotonic()
        with self._lock:
            hit = self._cached.get(key)
        if hit is not None and now - hit[0] < self._ttl:
            return hit[1]
        if user_id == OWNER or self._fetch_for_user is None:
            answer = self._fetch(app_id)
        else:
            answer = self._fetch_for_user(app_id, user_id)
        listing = ToolsListing.model_validate(answer)
        with self._lock:
            self._cached[key] = (now, listing)
        return listing

    def entries(self, app_id: str, user_id: str = OWNER) -> list[ToolInfo]:
        return list(self.listing(app_id, user_id).tools)

    def names(self, app_id: str, user_id: str = OWNER) -> list[str]:
        return [entry.name for entry in self.listing(app_id, user_id).tools]

    def registered(self, app_id: str, listing: dict[str, Any] | None = None) -> None:
        """`app_id` (re)registered with the executor ("*": every app, after the
        executor's restart): its old listings go, and `listing`, the executor's
        answer to the registration (the owner's), is kept in its place."""
        if app_id == "*":
            self.invalidate()
            return
        self.invalidate(app_id)
        if listing is None:
            return
        try:
            fresh = ToolsListing.model_validate(listing)
        except ValidationError:  # not a listing: the next use fetches one
            return
        with self._lock:
            self._cached[(app_id, OWNER)] = (time.monotonic(), fresh)

    def invalidate(self, app_id: str | None = None) -> None:
        """Forget one app's listings, every user's (None: all of them)."""
        with self._lock:
            if app_id is None:
                self._cached.clear()
            else:
                for key in [k for k in self._cached if k[0] == app_id]:
                    del self._cached[key]


def tools_blueprint(
    listings: ToolListings,
    installed: Callable[[str], bool] = lambda app_id: True,
    ensure_running: Callable[[str], None] = lambda app_id: None,
) -> Blueprint:
    """`GET /api/tools?app_id=X`: the app's listing and its providers' states. An
    installed app that is not running is started first (its own tools are known to the
    executor only while it runs); an app that is not installed is a 404."""
    from flask import Blueprint, g, request  # imported when the API is served

    routes = Blueprint("tools", __name__)

    @routes.get("/api/tools")
    def list_tools() -> dict[str, Any]:
        if g.get("identity") != _DESKTOP:
            raise Forbidden("only the desktop's token may list tools")
        app_id = request.args.get("app_id", "")
        if app_id:
            if not installed(app_id):
                raise NotFound(f"no app {app_id!r} is installed")
            ensure_running(app_id)
        return listings.listing(app_id).dump()

    return routes
