"""The controller's clients of the executor's and the apps' HTTP APIs.

Every call goes through `aios_runtime.json_client` (one kept-alive connection pool
per peer, shared by all threads). Every failure is an `AiosError` at this boundary:
`AppUnreachable` when nothing answers or the answer is late (`ExecutorUnreachable`,
a kind of it, when that peer is the executor), `BadAppReply` when the answer is not
JSON (or too large), and the peer's own error (`{"status": "error", "error": {code,
message}}`) re-raised with its code.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from aios_protocol.errors import AiosError, AppUnreachable, BadAppReply
from aios_runtime.json_client import JsonAnswer, request_json
from aios_runtime.users import OWNER

__all__ = [
    "EXECUTOR",
    "AppClient",
    "ExecutorClient",
    "ExecutorUnreachable",
    "json_call",
    "peer_error",
]

EXECUTOR = "the executor"  # how its failures name it ("the executor is not reachable")
MAX_APP_REPLY = 8 << 20  # bytes of one app reply (views carry data, not files)


def peer_error(answer: JsonAnswer, what: str) -> AiosError:
    """The error a non-2xx answer stands for, keeping the peer's code if it sent one."""
    body = answer.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        code = str(err.get("code") or "app_error")
        message = str(err.get("message") or f"{what} answered HTTP {answer.status}")
        return AiosError(message, code=code)
    snippet = answer.raw[:200].decode("utf-8", "replace").strip()
    return BadAppReply(
        f"{what} answered HTTP {answer.status}" + (f": {snippet}" if snippet else "")
    )


def json_call(
    method: str,
    url: str,
    body: Any = None,
    *,
    token: str | None,
    timeout: float,
    what: str,
) -> Any:
    """One request to a Triton service that answers JSON: the parsed body of a 2xx
    answer; the peer's own error (`peer_error`) otherwise, `BadAppReply` when the
    answer is not JSON."""
    answer = request_json(method, url, body, token=token, timeout=timeout, what=what)
    if not 200 <= answer.status < 300:
        raise peer_error(answer, what)
    if answer.body is None:
        raise BadAppReply(f"{what} answered something that is not JSON")
    return answer.body


class ExecutorUnreachable(AppUnreachable):
    """The executor did not answer (or too late): the steps could not run, the app
    itself is not at fault."""

    code = "executor_unreachable"


class ExecutorClient:
    """The executor's HTTP API as the controller uses it (master token)."""

    def __init__(self, url: str, token: str, *, timeout: float = 10.0):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def _call(
        self, method: str, path: str, body: Any = None, timeout: float | None = None
    ) -> Any:
        try:
            return json_call(
                method,
                self.url + path,
                body,
                token=self.token,
                timeout=timeout or self.timeout,
                what=EXECUTOR,
            )
        except AppUnreachable as exc:
            raise ExecutorUnreachable(exc.message) from exc

    def healthy(self, timeout: float = 1.0, pid: int | None = None) -> bool:
        """Whether the executor answers `/health`; with `pid`, only when the process
        answering is that one: a port handed out for it can be taken by another
        service (another launch's, say) before it binds, and that one must not be
        taken for it (the apps' registrations would be refused as forbidden)."""
        try:
            answer = request_json("GET", self.url + "/health", timeout=timeout)
        except AiosError:
            return False
        if answer.status != 200:
            return False
        return pid is None or (
            isinstance(answer.body, dict) and answer.body.get("pid") == pid
        )

    def register(self, registration: dict[str, Any]) -> dict[str, Any] | None:
        """`PUT /apps/<id>`; the app's tool listing the executor answers with (as
        `tool_listing` gives it, checked by `ToolListings.registered`), None from an
        executor that sends none."""
        app_id = quote(registration["app_id"], safe="")
        answer = self._call("PUT", f"/apps/{app_id}", registration)
        listing = answer.get("tools") if isinstance(answer, dict) else None
        return listing if isinstance(listing, dict) else None

    def unregister(self, app_id: str, user_id: str = OWNER) -> None:
        """`DELETE /apps/<id>`: the app's own process, or the one serving `user_id`."""
        query = "" if user_id == OWNER else f"?user_id={quote(user_id, safe='')}"
        self._call("DELETE", f"/apps/{quote(app_id, safe='')}{query}")

    def tool_listing(self, app_id: str, user_id: str = OWNER) -> dict[str, Any]:
        """`GET /tools?app_id=X&user_id=U` as a dict (`app_id` "": the tools every app
        has; `user_id`: what that user may call, the owner's by default)."""
        query = "&".join(
            f"{name}={quote(value, safe='')}"
            for name, value in (("app_id", app_id), ("user_id", user_id))
            if value and not (name == "user_id" and value == OWNER)
        )
        listing = self._call("GET", f"/tools{'?' + query if query else ''}")
        if not isinstance(listing, dict) or not isinstance(listing.get("tools"), list):
            raise BadAppReply("the executor's tool listing has no 'tools' list")
        return listing

    def tool_names(self, app_id: str) -> list[str]:
        listing = self._call("GET", f"/tools?app_id={quote(app_id, safe='')}")
        tools = listing.get("tools") if isinstance(listing, dict) else None
        if not isinstance(tools, list):
            raise BadAppReply("the executor's tool listing has no 'tools' list")
        return [str(t.get("name")) for t in tools if isinstance(t, dict) and t.get("name")]

    def run(self, run_request: dict[str, Any], timeout: float) -> dict[str, Any]:
        """POST /run; the `RunResponse` as a dict."""
        return self._call("POST", "/run", run_request, timeout=timeout)

    def set_system_cache(self, key: str, value: Any, ttl: float | None = None) -> None:
        body: dict[str, Any] = {"key": key, "value": value}
        if ttl is not None:
            body["ttl"] = ttl
        self._call("POST", "/cache/system", body)

    def events(self, since: int, wait: float) -> tuple[list[dict[str, Any]], int]:
        page = self._call("GET", f"/events?since={since}&wait={wait:g}", timeout=wait + 5)
        events = page.get("events") if isinstance(page, dict) else None
        if not isinstance(events, list):
            raise BadAppReply("the executor's events page has no 'events' list")
        return [e for e in events if isinstance(e, dict)], int(page.get("next", since))


def _listed_tools(answer: Any) -> list[dict[str, Any]] | None:
    """The tools of a `GET /manifest` answer ([] on 404), None when it is no listing."""
    if answer.status == 404:
        return []
    if answer.status != 200 or not isinstance(answer.body, dict):
        return None
    tools = answer.body.get("tools") or []
    return [t for t in tools if isinstance(t, dict) and t.get("name")]


class AppClient:
    """One app's HTTP API (its own token), as the controller calls it."""

    def __init__(self, app_id: str, url: str, token: str, handle_endpoint: str = "/handle"):
        self.app_id = app_id
        self.url = url.rstrip("/")
        self.token = token
        self.handle_endpoint = handle_endpoint

    @property
    def what(self) -> str:
        return f"app {self.app_id}"

    def _get(self, path: str, timeout: float) -> JsonAnswer:
        return request_json(
            "GET", self.url + path, token=self.token, timeout=timeout, what=self.what
        )

    def health(self, timeout: float) -> bool:
        """Alive means it answers HTTP at all below 500.

        The spec's bare-Flask `main.py` template has no `/health` and answers 404,
        which still shows a live, responsive server.
        """
        try:
            return self._get("/health", timeout).status < 500
        except AiosError:
            return False

    def manifest_tools(self, timeout: float = 2.0) -> list[dict[str, Any]]:
        """The custom tools the app lists in `GET /manifest` ([] on 404)."""
        answer = self._get("/manifest", timeout)
        tools = _listed_tools(answer)
        if tools is None:
            raise peer_error(answer, self.what)
        return tools

    def first_answer(self, timeout: float) -> tuple[bool, list[dict[str, Any]] | None]:
        """A starting app's probe: (alive, as `health` says it, its `manifest_tools`
        or None when its `/manifest` did not list them). One request where the start
        would make two: the tools are what its registration sends next."""
        try:
            answer = self._get("/manifest", timeout)
        except AiosError:
            return False, None
        return answer.status < 500, _listed_tools(answer)

    def handle(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        """POST the `HandleRequest`; the raw reply dict (validated by the caller)."""
        answer = request_json(
            "POST",
            self.url + self.handle_endpoint,
            request,
            token=self.token,
            timeout=timeout,
            what=self.what,
            max_bytes=MAX_APP_REPLY,  # the desktop would choke on more
        )
        body = answer.body
        if isinstance(body, dict) and body.get("status") == "error" and "view_type" in body:
            return body  # an AppReply.error(...) view, keep it as is
        if not 200 <= answer.status < 300:
            raise peer_error(answer, self.what)
        if not isinstance(answer.body, dict):
            raise BadAppReply(f"{self.what} answered something that is not a JSON object")
        return answer.body
