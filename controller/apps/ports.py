"""Port assignment for one launch.

The tracked `ports.json` gives preferred ports keyed by service id (`controller`,
`executor`, app ids); an app's manifest `port` is the next preference. A preferred
port that is taken (or already handed out in this launch) falls back to a free
ephemeral port; `--ports auto` picks free ports for everything. The tracked file is
only ever read: the live map of a launch is written to the state folder by
`state_dir.StateDir`.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from aios_protocol.errors import InvalidRequest

__all__ = ["PortAssigner", "load_preferred_ports", "port_is_free"]

AUTO = "auto"


def load_preferred_ports(source: str | Path | None) -> dict[str, int]:
    """The preferred port map from `source`; `"auto"`, None or a missing file → {}."""
    if source is None or str(source) == AUTO:
        return {}
    path = Path(source)
    if not path.is_file():
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidRequest(f"{path}: not a valid port map ({exc})") from exc
    if not isinstance(raw, dict):
        raise InvalidRequest(f"{path}: must hold a JSON object of id → port")
    ports = {}
    for key, value in raw.items():
        if isinstance(value, dict):  # the design's routing-table form {"port": …}
            value = value.get("port")
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 65536:
            raise InvalidRequest(f"{path}: {key}: port must be an integer in 1..65535")
        ports[str(key)] = value
    return ports


def port_is_free(port: int) -> bool:
    """Whether 127.0.0.1:`port` can be bound now (as our servers bind it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _ephemeral_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class PortAssigner:
    """Hands out one distinct port per service id for a launch."""

    preferred: dict[str, int] = field(default_factory=dict)
    assigned: dict[str, int] = field(default_factory=dict)
    # ids whose preferred port was taken, with that port (reported on stderr)
    displaced: dict[str, int] = field(default_factory=dict)

    def assign(self, service_id: str, fallback_preference: int | None = None) -> int:
        """The port for `service_id`: preferred if free, else a free ephemeral one."""
        if service_id in self.assigned:
            return self.assigned[service_id]
        wanted = self.preferred.get(service_id, fallback_preference)
        taken = set(self.assigned.values())
        if wanted is not None:
            if wanted not in taken and port_is_free(wanted):
                self.assigned[service_id] = wanted
                return wanted
            self.displaced[service_id] = wanted
        port = _ephemeral_port()
        while port in taken:
            port = _ephemeral_port()
        self.assigned[service_id] = port
        return port

    def reassign(self, service_id: str) -> int:
        """A new port for `service_id` whose current one turned out to be taken."""
        old = self.assigned.pop(service_id, None)
        taken = set(self.assigned.values()) | ({old} if old else set())
        port = _ephemeral_port()
        while port in taken:
            port = _ephemeral_port()
        if old is not None:
            self.displaced.setdefault(service_id, old)
        self.assigned[service_id] = port
        return port

    def assign_all(self, ids: Iterable[tuple[str, int | None]]) -> dict[str, int]:
        for service_id, fallback in ids:
            self.assign(service_id, fallback)
        return dict(self.assigned)
