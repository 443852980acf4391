"""Loaded at start-up by every app process the controller launches.

The controller puts this folder first on an app's `PYTHONPATH`, so Python imports
this module before the app's own code runs. It makes every socket the app binds a
loopback one: `0.0.0.0`, `""` or any other IPv4 address becomes `127.0.0.1`, and `::`
or any other IPv6 address becomes `::1`. And when the app imports `flask`, every
`flask.Flask` it creates gets the edge of `aios_runtime.edge` (loopback Host and
Origin, the app's token from `AIOS_TOKEN`, `/health` public, strict JSON, the one
error shape); an app that installs the edge itself (the SDK's `create_app`) keeps its
own settings. The design's verbose `main.py` template (a bare Flask app with
`app.run(host='0.0.0.0', …)`, which must run unmodified) therefore listens on
127.0.0.1 only and holds the same rules as every other service. This guards against a
careless app, not a hostile one: code in the app process can undo it (SECURITY.md).

A `sitecustomize` further down the path (a distribution's own) is still run.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import ipaddress
import os
import socket
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import _socket

    from _typeshed import ReadableBuffer

    _Address = tuple[Any, ...] | str | ReadableBuffer  # what `socket.bind` takes

_HERE = os.path.dirname(os.path.abspath(__file__))
_real_bind = socket.socket.bind


def _loopback(family: int, address: _Address) -> _Address:
    if not isinstance(address, tuple) or not address:
        return address  # AF_UNIX paths and the like
    host = address[0]
    if family == socket.AF_INET:
        try:
            loopback = host != "" and ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        return address if loopback else ("127.0.0.1", *address[1:])
    if family == socket.AF_INET6:
        try:
            loopback = host != "" and ipaddress.ip_address(host.split("%")[0]).is_loopback
        except ValueError:
            loopback = host == "localhost"
        return address if loopback else ("::1", *address[1:])
    return address


def _bind_loopback(self: _socket.socket, address: _Address, /) -> None:
    return _real_bind(self, _loopback(self.family, address))


socket.socket.bind = _bind_loopback  # type: ignore[method-assign]


def _guard_flask(flask: ModuleType) -> None:
    """Make every `flask.Flask` built from now on install the edge with this app's token."""
    flask_class = flask.Flask
    if getattr(flask_class, "_aios_guarded", False):
        return
    real_init = flask_class.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        from aios_runtime.edge import Edge, token_matches

        token = os.environ.get("AIOS_TOKEN", "").strip()  # none: every token is refused
        Edge(self, token_matches(token), public_paths=("/health",))

    flask_class.__init__ = __init__
    flask_class._aios_guarded = True


class _FlaskLoader(importlib.abc.Loader):
    """Runs `flask`'s own loader, then `_guard_flask` on the fresh module."""

    def __init__(self, inner: importlib.abc.Loader):
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._inner.exec_module(module)
        _guard_flask(module)


class _GuardFlaskOnImport(importlib.abc.MetaPathFinder):
    """Finds `flask` as the other finders do, with `_FlaskLoader` around its loader."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "flask":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _FlaskLoader(spec.loader)
                return spec
        return None


if "flask" in sys.modules:  # imported by a sitecustomize hook before this one
    _guard_flask(sys.modules["flask"])
else:
    sys.meta_path.insert(0, _GuardFlaskOnImport())


def _chain() -> None:
    """Run the next `sitecustomize` on the path, if there is one."""
    rest = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    for folder in rest:
        candidate = os.path.join(folder or ".", "sitecustomize.py")
        if os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location(
                "_aios_next_sitecustomize", candidate
            )
            if spec is not None and spec.loader is not None:
                spec.loader.exec_module(importlib.util.module_from_spec(spec))
            return


_chain()
