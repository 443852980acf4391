"""`cache_get` / `cache_set`: an in-memory key-value cache with TTL and bounded size.

Each app has its own namespace for each user; the shared `system` namespace (where the desktop's
UI snapshot lives, key `ui_snapshot`) is readable by every app and writable only by
the controller (`POST /cache/system`). Values are stored as JSON text, so callers
never share mutable objects, and each namespace keeps at most `max_entries`
entries (least recently used evicted first).
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from aios_protocol.errors import Forbidden
from aios_runtime.users import OWNER
from executor.tools.catalog import InvalidArgs

if TYPE_CHECKING:
    from executor.toolbox import ToolContext

__all__ = ["SYSTEM_NAMESPACE", "ToolCache", "cache_get", "cache_set"]

SYSTEM_NAMESPACE = "system"
_MAX_TTL = 30 * 24 * 3600


class ToolCache:
    """Namespaced LRU cache of JSON values with optional expiry."""

    def __init__(self, max_entries: int = 1000, max_value_bytes: int = 4 << 20):
        self._max_entries = max_entries
        self._max_value_bytes = max_value_bytes
        self._spaces: dict[str, OrderedDict[str, tuple[str, float | None]]] = {}
        self._lock = threading.Lock()

    def set(self, namespace: str, key: str, value: Any, ttl: float | None = None) -> None:
        if not key or len(key) > 256:
            raise InvalidArgs("key must be 1–256 characters")
        if ttl is not None and not 0 < ttl <= _MAX_TTL:
            raise InvalidArgs(f"ttl must be between 0 and {_MAX_TTL} seconds")
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidArgs(f"value is not JSON: {exc}") from exc
        if len(text.encode()) > self._max_value_bytes:
            raise InvalidArgs(f"value larger than {self._max_value_bytes} bytes")
        expires = time.monotonic() + ttl if ttl else None
        with self._lock:
            space = self._spaces.setdefault(namespace, OrderedDict())
            space[key] = (text, expires)
            space.move_to_end(key)
            while len(space) > self._max_entries:
                space.popitem(last=False)

    def get(self, namespace: str, key: str) -> Any:
        """The value under `key`, or None when missing or expired."""
        with self._lock:
            space = self._spaces.get(namespace)
            if space is None or key not in space:
                return None
            text, expires = space[key]
            if expires is not None and time.monotonic() >= expires:
                del space[key]
                return None
            space.move_to_end(key)
        return json.loads(text)


def app_namespace(app_id: str, user_id: str = OWNER) -> str:
    """One app's entries for one user (the owner's keep their older name)."""
    return f"app:{app_id}" if user_id == OWNER else f"user:{user_id}:app:{app_id}"


def cache_get(ctx: ToolContext, args: dict[str, Any]) -> Any:
    namespace = args.get("namespace") or "app"
    space = (
        SYSTEM_NAMESPACE
        if namespace == SYSTEM_NAMESPACE
        else app_namespace(ctx.app.app_id, ctx.app.user_id)
    )
    return ctx.cache.get(space, args["key"])


def cache_set(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    if args.get("namespace") == SYSTEM_NAMESPACE:
        raise Forbidden("apps cannot write the system namespace")
    ttl = args.get("ttl")
    ctx.cache.set(
        app_namespace(ctx.app.app_id, ctx.app.user_id), args["key"], args["value"], ttl
    )
    return {"key": args["key"], "stored": True, "ttl": ttl}
