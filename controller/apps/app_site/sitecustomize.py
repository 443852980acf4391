"""Loaded at start-up by every app process the controller launches (SECURITY.md W5).

The controller puts this folder first on an app's `PYTHONPATH`, so Python imports
this module before the app's own code runs. It makes every socket the app binds a
loopback one: `0.0.0.0`, `""` or any other IPv4 address becomes `127.0.0.1`, and `::`
or any other IPv6 address becomes `::1`. The design's verbose `main.py` template
(`app.run(host='0.0.0.0', …)`, which must run unmodified, S-76) therefore listens on
127.0.0.1 only. This guards against a careless app, not a hostile one: code in the
app process can undo it (SECURITY.md says so).

A `sitecustomize` further down the path (a distribution's own) is still run.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import os
import socket
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_real_bind = socket.socket.bind


def _loopback(family: int, address: object) -> object:
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


def _bind_loopback(self: socket.socket, address: object) -> None:
    return _real_bind(self, _loopback(self.family, address))


socket.socket.bind = _bind_loopback  # type: ignore[method-assign]


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
