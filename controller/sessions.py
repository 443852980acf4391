"""Session memory (S-42): every field, saved atomically, restored after a restart.

A session is one conversation with the desktop or the CLI: `session_id`
(`sess_<hex>`), `history` (one entry per instruction, open or action), `current_tasks`
and `completed_tasks`, `context` (controller-side facts such as the last app used),
`agent_states` (state each app keeps between calls, e.g. `last_played`, injected
back as `cwd_state`) and `tool_calls_log` (every step round the controller forwarded).
Each session is one JSON file `<state_dir>/sessions/<id>.json`; lists are bounded so
a long session cannot grow without limit.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from aios_sdk.errors import ProtocolError

__all__ = ["SESSION_ID_PATTERN", "Session", "SessionStore", "new_session_id"]

SESSION_ID_PATTERN = re.compile(r"^sess_[A-Za-z0-9]{4,64}$")
MAX_HISTORY = 100
MAX_COMPLETED = 100
MAX_TOOL_CALLS = 500
# Lists whose entries are never changed once appended: their JSON is cached per entry.
_APPEND_ONLY = ("history", "completed_tasks", "tool_calls_log")
# json.dumps(x, ensure_ascii=False, default=str), without building an encoder per call
_ENCODE = json.JSONEncoder(ensure_ascii=False, default=str).encode


def new_session_id() -> str:
    return f"sess_{secrets.token_hex(8)}"


@dataclass
class Session:
    """S-42: the memory of one conversation."""

    session_id: str
    history: list[dict[str, Any]] = field(default_factory=list)
    current_tasks: list[dict[str, Any]] = field(default_factory=list)
    completed_tasks: list[dict[str, Any]] = field(default_factory=list)
    context: dict[str, Any] = field(default_factory=dict)
    agent_states: dict[str, dict[str, Any]] = field(default_factory=dict)
    tool_calls_log: list[dict[str, Any]] = field(default_factory=list)
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)

    # ------------------------------------------------------------ mutations

    def add_turn(self, kind: str, text: str | None, **extra: Any) -> dict[str, Any]:
        """Append one history entry (instruction / open / action) and return it."""
        turn = {"time": round(time.time(), 3), "kind": kind, "text": text or "", **extra}
        self.history.append(turn)
        del self.history[:-MAX_HISTORY]
        return turn

    def start_task(self, task: dict[str, Any]) -> None:
        self.current_tasks.append(task)

    def finish_task(self, task: dict[str, Any]) -> None:
        self.current_tasks = [
            t for t in self.current_tasks if t.get("task_id") != task.get("task_id")
        ]
        self.completed_tasks.append(task)
        del self.completed_tasks[:-MAX_COMPLETED]

    def merge_agent_state(self, app_id: str, state: dict[str, Any]) -> None:
        """Merge what an app asked to keep (reply field `state`) into its state."""
        current = self.agent_states.setdefault(app_id, {})
        for key, value in state.items():
            if value is None:
                current.pop(key, None)
            else:
                current[key] = value

    def log_tool_calls(self, entries: list[dict[str, Any]]) -> None:
        self.tool_calls_log.extend(entries)
        del self.tool_calls_log[:-MAX_TOOL_CALLS]

    # ---------------------------------------------------------- serialisation

    def to_json(self) -> dict[str, Any]:
        # shallow on purpose: `asdict` deep-copies every nested entry (milliseconds
        # for a full session); json.dumps walks the lists and dicts as they are
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Session:
        known = {f for f in cls.__dataclass_fields__}
        values = {k: v for k, v in raw.items() if k in known}
        session = cls(**values)
        # what was running when the controller stopped did not finish
        for task in session.current_tasks:
            session.completed_tasks.append({**task, "status": "error", "interrupted": True})
        session.current_tasks = []
        return session


def _spare(path: Path) -> Path:
    return path.with_name(f".{path.name}.new")


def _replace_file(path: Path, data: bytes) -> None:
    """Replace `path` by `data` through a spare copy: a reader (or a restart after a
    crash) finds a complete old or new version, never half a file.

    Sessions are rewritten after every turn, so this is on the request path:
    no fsync (a power loss may keep an older version), and the old file is
    removed before the spare is renamed, because renaming over an existing file
    makes ext4 write the new data out at once (auto_da_alloc), which alone cost
    more than the rest of an instruction. A crash between the two steps leaves
    the complete spare, which `_load` falls back to.
    """
    spare = _spare(path)
    try:
        fd = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "wb") as handle:
        handle.write(data)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    os.rename(spare, path)


class _EncodedList:
    """One append-only list as last encoded: its entries and their JSON, in order."""

    SEARCH = 64  # how many dropped entries at the front are looked through

    def __init__(self) -> None:
        self.entries: list[Any] = []
        self.items: list[str] = []

    def encode(self, value: list[Any]) -> str:
        old = self.entries
        start = None
        if value and old:
            first = value[0]
            for i in range(min(len(old), self.SEARCH)):
                if old[i] is first:
                    start = i
                    break
        kept = len(old) - start if start is not None else 0
        if start is None or kept > len(value) or value[kept - 1] is not old[-1]:
            start, kept = 0, 0  # not a trimmed and extended version: encode it all
        self.items = self.items[start:] if kept else []
        self.items.extend(_ENCODE(entry) for entry in value[kept:])
        self.entries = list(value)
        return "[" + ", ".join(self.items) + "]"


class SessionStore:
    """Sessions by id, loaded lazily from disk and written back atomically.

    Each session has its own lock; `lock(session_id)` serialises the requests of one
    session while different sessions proceed in parallel.
    """

    def __init__(self, folder: Path):
        self._folder = Path(folder)
        self._sessions: dict[str, Session] = {}
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()
        # per session: the append-only lists' entries as last encoded
        self._encoded: dict[str, dict[str, _EncodedList]] = {}

    def _path(self, session_id: str) -> Path:
        return self._folder / f"{session_id}.json"

    def lock(self, session_id: str) -> threading.RLock:
        with self._guard:
            return self._locks.setdefault(session_id, threading.RLock())

    def get_or_create(self, session_id: str | None) -> Session:
        """The session `session_id` (from memory or disk), or a new one.

        A well-formed id that is not known yet starts a session under that id; a
        malformed id is a `ProtocolError`.
        """
        if session_id is None or session_id == "":
            session_id = new_session_id()
        elif not SESSION_ID_PATTERN.match(session_id):
            raise ProtocolError("session_id must look like sess_<letters or digits>")
        with self._guard:
            session = self._sessions.get(session_id)
            if session is None:
                session = self._load(session_id) or Session(session_id=session_id)
                self._sessions[session_id] = session
            return session

    def get(self, session_id: str) -> Session | None:
        if not SESSION_ID_PATTERN.match(session_id or ""):
            return None
        with self._guard:
            session = self._sessions.get(session_id) or self._load(session_id)
            if session is not None:
                self._sessions[session_id] = session
            return session

    def _load(self, session_id: str) -> Session | None:
        path = self._path(session_id)
        try:
            try:
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:  # a save cut short between its two steps
                text = _spare(path).read_text(encoding="utf-8")
            raw = json.loads(text)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None  # unreadable: start afresh rather than fail the request
        if not isinstance(raw, dict):
            return None
        raw["session_id"] = session_id
        try:
            return Session.from_json(raw)
        except TypeError:
            return None

    def _encode(self, session: Session) -> str:
        """`json.dumps(session.to_json())`, reusing the JSON of old entries.

        A full session holds hundreds of entries; re-encoding all of them after
        every turn cost more than the rest of the instruction. The append-only
        lists only ever gain entries at the end and lose them at the front, so
        their encoded entries are kept and only new ones are encoded.
        """
        caches = self._encoded.setdefault(session.session_id, {})
        parts = []
        for name, value in session.to_json().items():
            if name in _APPEND_ONLY and isinstance(value, list):
                encoded = caches.setdefault(name, _EncodedList()).encode(value)
            else:
                encoded = _ENCODE(value)
            parts.append(f"{json.dumps(name)}: {encoded}")
        return "{" + ", ".join(parts) + "}"

    def save(self, session: Session) -> None:
        session.updated = time.time()
        with self.lock(session.session_id):
            data = self._encode(session).encode("utf-8")
            _replace_file(self._path(session.session_id), data)

    def ids(self) -> list[str]:
        on_disk = {p.stem for p in self._folder.glob("sess_*.json")}
        return sorted(on_disk | set(self._sessions))
