"""Session memory: every field, journalled cheaply, restored after a restart.

A session is one conversation with the desktop or the CLI: `session_id`
(`sess_<hex>`), `history` (one entry per instruction, open or action), `current_tasks`
and `completed_tasks`, `context` (controller-side facts such as the last app used),
`agent_states` (state each app keeps between calls, e.g. `last_played`, injected
back as `cwd_state`) and `tool_calls_log` (every step round the controller forwarded).
Lists are bounded so a long session cannot grow without limit.

Each session is one file `<state_dir>/sessions/<id>.json`, a journal of JSON lines.
The first line is a snapshot: the whole session as one JSON object. Every later line
is the delta one `save` appended: `"-<list>": n` entries dropped at the front and
`"+<list>": [...]` entries added at the end of an append-only list (`history`,
`completed_tasks`, `tool_calls_log`), and the current value of every other field that
changed. A save therefore writes O(what changed); a fresh snapshot replaces the file
(compaction) after `JOURNAL_MAX_DELTAS` deltas, once the deltas outgrow the snapshot,
when a list changed in another way, and on a store's first save of a session.
`load_session_file` replays a journal; it also reads the single JSON object (one
line or pretty-printed) that sessions were saved as before the journal.

A request changes its session through a `SessionEdit` (`SessionStore.edit`): the edit
records the changes while apps and the executor work, and the store applies them
and journals them once, under the session's lock, when the request is done.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
import time
from collections import ChainMap, OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol

from aios_protocol.errors import InvalidRequest
from aios_runtime.files import StorageFull, is_storage_full, keep_unreadable, set_aside

__all__ = [
    "SESSION_ID_PATTERN",
    "Session",
    "SessionStore",
    "SessionView",
    "SessionEdit",
    "load_session_file",
    "new_session_id",
]

SESSION_ID_PATTERN = re.compile(r"^sess_[A-Za-z0-9]{4,64}$")
MAX_HISTORY = 100
MAX_COMPLETED = 100
MAX_TOOL_CALLS = 500
# Lists whose entries are never changed once appended: they only gain entries at
# the end and lose them at the front, so a save journals just that difference.
_APPEND_ONLY = {
    "history": MAX_HISTORY,
    "completed_tasks": MAX_COMPLETED,
    "tool_calls_log": MAX_TOOL_CALLS,
}
# A snapshot replaces the journal after this many deltas, or once the deltas'
# bytes pass the snapshot's size (at least JOURNAL_MIN_BYTES): a file stays
# within about twice a snapshot and a load replays at most this many lines.
JOURNAL_MAX_DELTAS = 64
JOURNAL_MIN_BYTES = 64 * 1024
# json.dumps(x, ensure_ascii=False, default=str), without building an encoder per
# call. Its output never holds a raw "\n" (json escapes it inside strings), so a
# line of the journal is one JSON value; U+2028 and the like may appear raw, which
# is why the journal is split on "\n" only, never with str.splitlines().
_ENCODE = json.JSONEncoder(ensure_ascii=False, default=str).encode
_DECODER = json.JSONDecoder()


def new_session_id() -> str:
    return f"sess_{secrets.token_hex(8)}"


@dataclass
class Session:
    """The memory of one conversation."""

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
        _merge_state(self.agent_states.setdefault(app_id, {}), state)

    def agent_state(self, app_id: str) -> Mapping[str, Any]:
        """The state the app `app_id` keeps in this session (not to be changed)."""
        return self.agent_states.get(app_id, {})

    def log_tool_calls(self, entries: list[dict[str, Any]]) -> None:
        self.tool_calls_log.extend(entries)
        del self.tool_calls_log[:-MAX_TOOL_CALLS]

    # ---------------------------------------------------------- serialisation

    def to_json(self) -> dict[str, Any]:
        # shallow on purpose: `asdict` would deep-copy every nested entry;
        # json.dumps walks the lists and dicts as they are
        return {name: getattr(self, name) for name in _SESSION_FIELDS}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Session:
        known = {f for f in cls.__dataclass_fields__}
        values = {k: v for k, v in raw.items() if k in known}
        session = cls(**values)
        # what was running when the controller stopped did not finish
        for task in session.current_tasks:
            session.completed_tasks.append({**task, "status": "error", "interrupted": True})
        del session.completed_tasks[:-MAX_COMPLETED]
        session.current_tasks = []
        return session


def _merge_state(current: dict[str, Any], state: dict[str, Any]) -> None:
    """An app's `state` reply field merged into its kept state: None removes a key."""
    for key, value in state.items():
        if value is None:
            current.pop(key, None)
        else:
            current[key] = value


class SessionView(Protocol):
    """What reading a session needs: a `Session`, or a `SessionEdit` that sees its own changes."""

    @property
    def session_id(self) -> str: ...

    @property
    def history(self) -> list[dict[str, Any]]: ...

    @property
    def context(self) -> Mapping[str, Any]: ...

    def agent_state(self, app_id: str) -> Mapping[str, Any]: ...


class SessionEdit:
    """One request's changes to its session, applied at once when the request ends.

    Made by `SessionStore.edit`. The edit reads through to the session and sees its
    own changes (`context`, `agent_state`); every change is recorded, not made, so
    the session's lock is not taken while an app or the executor works and the
    session's other requests go on meanwhile. The tasks of one instruction record
    from parallel threads: each record is one list append.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self.session_id = session.session_id
        self._context: dict[str, Any] = {}
        # reads see the session's context under the edit's own; writes go to the edit
        self.context: ChainMap[str, Any] = ChainMap(self._context, session.context)
        self._states: dict[str, list[dict[str, Any]]] = {}
        self._changes: list[Callable[[Session], object]] = []

    @property
    def history(self) -> list[dict[str, Any]]:
        return self.session.history

    def agent_state(self, app_id: str) -> Mapping[str, Any]:
        """The app's kept state with what this edit merged into it so far."""
        merged = self._states.get(app_id)
        if not merged:
            return self.session.agent_state(app_id)
        state = dict(self.session.agent_state(app_id))
        for change in list(merged):
            _merge_state(state, change)
        return state

    def add_turn(self, kind: str, text: str | None, **extra: Any) -> None:
        self._changes.append(lambda session: session.add_turn(kind, text, **extra))

    def start_task(self, task: dict[str, Any]) -> None:
        self._changes.append(lambda session: session.start_task(task))

    def finish_task(self, task: dict[str, Any]) -> None:
        self._changes.append(lambda session: session.finish_task(task))

    def merge_agent_state(self, app_id: str, state: dict[str, Any]) -> None:
        self._states.setdefault(app_id, []).append(state)
        self._changes.append(lambda session: session.merge_agent_state(app_id, state))

    def log_tool_calls(self, entries: list[dict[str, Any]]) -> None:
        self._changes.append(lambda session: session.log_tool_calls(entries))

    def _apply(self) -> None:
        """Make the recorded changes on the session, in the order they were recorded."""
        self.session.context.update(self._context)
        for change in self._changes:
            change(self.session)
        self._context.clear()
        self._states.clear()
        self._changes.clear()


# `fields()` filters the dataclass's fields on every call; a save needs only the names
_SESSION_FIELDS = tuple(f.name for f in fields(Session))
_JSON_NAMES = {name: json.dumps(name) for name in _SESSION_FIELDS}
_SCALARS = frozenset({str, int, float, bool})
_UNSET = object()


# ------------------------------------------------------------------ the file


def _spare(path: Path) -> Path:
    return path.with_name(f".{path.name}.new")


def _replace_file(path: Path, data: bytes) -> None:
    """Replace `path` by `data` through a spare copy: a reader (or a restart after a
    crash) finds a complete old or new version, never half a file.

    This is on the request path (every compaction of a journal): no fsync (a
    power loss may keep an older version), and the old file is removed before
    the spare is renamed, because renaming over an existing file makes ext4
    write the new data out at once (auto_da_alloc), which alone cost more than
    the rest of an instruction. A crash between the two steps leaves the
    complete spare, which `load_session_file` falls back to.
    """
    spare = _spare(path)
    try:
        fd = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with open(fd, "wb") as handle:
            handle.write(data)
    except BaseException:
        spare.unlink(missing_ok=True)  # a full disk: `path` is still the old version
        raise
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    os.rename(spare, path)


def _append_line(path: Path, line: bytes) -> bool:
    """Append one journal line with a single write (no fsync, like `_replace_file`).

    False when the file is gone or took only part of the line; the caller then
    writes a snapshot, which also replaces a line cut short.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    except FileNotFoundError:
        return False
    try:
        return os.write(fd, line) == len(line)
    finally:
        os.close(fd)


def load_session_file(path: Path, damage: list[str] | None = None) -> dict[str, Any]:
    """The session saved at `path` as one dict: the snapshot with its deltas replayed.

    The first JSON value may span lines (a session saved before the journal).
    Replay stops at the first line that is not a whole, valid delta (a crash
    while appending, a hand edit): everything before it is kept, and what stopped
    it is added to `damage`. Falls back to the spare copy a compaction cut short
    leaves. Raises `FileNotFoundError` when there is neither, `ValueError` when
    the snapshot is unreadable.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = _spare(path).read_bytes()
    # "replace": a line cut inside a character must not make the whole file unreadable
    text = data.decode("utf-8", errors="replace")
    start = len(text) - len(text.lstrip())
    session, end = _DECODER.raw_decode(text, start)  # one parse, unlike json.loads first
    if not isinstance(session, dict):
        raise ValueError("a session file starts with a JSON object")
    for number, line in enumerate(text[end:].split("\n")):
        if not line.strip():
            continue
        try:
            applied = _apply_delta(session, json.loads(line))
        except ValueError:
            applied = False
        if not applied:
            if damage is not None:
                damage.append(f"line {number + 1} of its journal is cut off or not valid")
            break
    for name, bound in _APPEND_ONLY.items():
        if isinstance(session.get(name), list):
            del session[name][:-bound]
    return session


def _apply_delta(session: dict[str, Any], delta: Any) -> bool:
    """Apply one journal line to `session`; False (and nothing applied) if malformed."""
    if not isinstance(delta, dict):
        return False
    for key, value in delta.items():
        if key[:1] in ("-", "+"):
            target = session.get(key[1:], [])
            if not isinstance(target, list):
                return False
            if key[0] == "-" and not (type(value) is int and 0 <= value <= len(target)):
                return False
            if key[0] == "+" and not isinstance(value, list):
                return False
    for key, value in delta.items():  # a list's "-" comes before its "+"
        if key[:1] == "-":
            del session.setdefault(key[1:], [])[:value]
        elif key[:1] == "+":
            session.setdefault(key[1:], []).extend(value)
        else:
            session[key] = value
    return True


# --------------------------------------------------------------- the journal


class _EncodedList:
    """One append-only list as last written: its entries and their JSON, in order."""

    SEARCH = 64  # how many dropped entries at the front are looked through

    def __init__(self) -> None:
        self.entries: list[Any] = []
        self.items: list[str] = []

    def update(self, value: list[Any]) -> tuple[int, list[str]] | None:
        """Take `value` as the list's new content and encode what is new.

        Returns (entries dropped at the front, JSON of the entries added at the
        end) when `value` is the last version trimmed and extended, else None
        (then every entry was encoded afresh).
        """
        last = len(self.entries)
        dropped = self._follow(value)
        if dropped is None:
            self.items = [_ENCODE(entry) for entry in value]
            self.entries = list(value)
            return None
        new = [_ENCODE(entry) for entry in value[last - dropped :]]
        del self.items[:dropped]
        self.items.extend(new)
        return dropped, new

    def _follow(self, value: list[Any]) -> int | None:
        """Bring `entries` up to `value` if it is them trimmed at the front (by the
        number returned) and extended at the end; None otherwise (`entries` is then
        left half-done, to be replaced).

        Done in place and compared as whole lists (identity first): the kept
        entries are neither copied nor compared one by one in Python — a save
        then costs what changed, not the length of the list.
        """
        old = self.entries
        if not old:
            old.extend(value)
            return 0
        if not value:
            return None
        first = value[0]
        total = len(old)
        removed = 0  # entries already cut from the front of `old`
        for start in range(min(total, self.SEARCH)):
            if old[start - removed] is not first:
                continue
            del old[: start - removed]
            removed = start
            kept = total - start
            if kept > len(value):
                continue
            old.extend(value[kept:])
            if old == value:
                return start
            del old[kept:]
        return None

    def json(self) -> str:
        return "[" + ", ".join(self.items) + "]"


class _Journal:
    """What was last written for one session, so the next save writes only a delta."""

    def __init__(self, path: Path) -> None:
        self.path = path  # the session's file (a Path costs a join to build)
        self.lists = {name: _EncodedList() for name in _APPEND_ONLY}
        self.values: dict[str, str] = {}  # the other fields' JSON as last written
        # a str or number field as last written, itself: the very same object (the
        # session's id, when it was created) is not encoded again
        self.scalars: dict[str, Any] = {}
        self.deltas = -1  # delta lines after the snapshot; -1: no snapshot written yet
        self.delta_bytes = 0
        self.snapshot_bytes = 0

    def next_line(self, session: Session) -> tuple[bytes, bool]:
        """The line that brings the file up to `session`: (line, is_snapshot).

        A snapshot replaces the file; a delta is appended to it.
        """
        changes: list[str] = []
        whole = self.deltas < 0 or self.deltas >= JOURNAL_MAX_DELTAS
        for name, value in session.to_json().items():
            cache = self.lists.get(name)
            if cache is not None:
                if not isinstance(value, list):  # the journal keeps these lists
                    value = list(value) if isinstance(value, tuple) else []
                change = cache.update(value)
                if change is None:
                    whole = True
                elif not whole:
                    dropped, added = change
                    if dropped:
                        changes.append(f'"-{name}": {dropped}')
                    if added:
                        changes.append(f'"+{name}": [' + ", ".join(added) + "]")
            else:
                scalar = type(value) in _SCALARS
                if scalar and self.scalars.get(name, _UNSET) is value:
                    continue
                encoded = _ENCODE(value)
                if scalar:
                    self.scalars[name] = value
                if self.values.get(name) != encoded:
                    self.values[name] = encoded
                    changes.append(f"{_JSON_NAMES[name]}: {encoded}")
        if not whole:
            line = ("{" + ", ".join(changes) + "}\n").encode("utf-8")
            budget = max(self.snapshot_bytes, JOURNAL_MIN_BYTES)
            if self.delta_bytes + len(line) <= budget:
                return line, False
        return self.snapshot(session), True

    def snapshot(self, session: Session) -> bytes:
        parts = []
        for name in session.to_json():
            cache = self.lists.get(name)
            encoded = cache.json() if cache is not None else self.values[name]
            parts.append(f"{_JSON_NAMES[name]}: {encoded}")
        return ("{" + ", ".join(parts) + "}\n").encode("utf-8")

    def written(self, line: bytes, snapshot: bool) -> None:
        if snapshot:
            self.deltas, self.delta_bytes, self.snapshot_bytes = 0, 0, len(line)
        else:
            self.deltas += 1
            self.delta_bytes += len(line)


# ----------------------------------------------------------------- the store


class SessionStore:
    """Sessions by id, loaded lazily from disk and journalled after every change.

    Each session has its own lock, held only while changes are made and written:
    `edit(session_id)` takes it once per request; `lock(session_id)` (with `save`)
    serves a change made apart from a turn, such as the background summary. A
    session's journal starts with a snapshot on this store's first save of it (which
    also replaces a line a crash cut short), so a restart continues every file
    correctly. At most `kept` sessions stay in memory: the one used longest ago with
    no request running in it leaves memory (its file stays; it is read again when it
    is next used), so memory does not grow with the number of conversations. A
    session's lock and journal state leave with it, and stay out when it is locked or
    saved apart from a request after it left.
    """

    def __init__(self, folder: Path, *, kept: int = 256):
        self._folder = Path(folder)
        self._kept = kept
        # in the order they were last used, the latest last
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()
        # per session: what was last written to its file
        self._journals: dict[str, _Journal] = {}
        # per session: requests running in it now (such a session stays in memory)
        self._running: dict[str, int] = {}

    def _path(self, session_id: str) -> Path:
        return self._folder / f"{session_id}.json"

    def lock(self, session_id: str) -> threading.RLock:
        lock = self._locks.get(session_id)
        if lock is not None:
            return lock
        with self._guard:
            return self._locks.setdefault(session_id, threading.RLock())

    def get_or_create(self, session_id: str | None) -> Session:
        """The session `session_id` (from memory or disk), or a new one.

        A well-formed id that is not known yet starts a session under that id; a
        malformed id is a `InvalidRequest`.
        """
        if session_id is None or session_id == "":
            session_id = new_session_id()
        elif not SESSION_ID_PATTERN.match(session_id):
            raise InvalidRequest("session_id must look like sess_<letters or digits>")
        with self._guard:
            session = self._sessions.get(session_id)
            if session is None:
                session = self._load(session_id) or Session(session_id=session_id)
                self._sessions[session_id] = session
                self._leave_memory()
            self._sessions.move_to_end(session_id)
            return session

    def get(self, session_id: str) -> Session | None:
        if not SESSION_ID_PATTERN.match(session_id or ""):
            return None
        with self._guard:
            session = self._sessions.get(session_id)
            if session is None:
                session = self._load(session_id)
                if session is None:
                    return None
                self._sessions[session_id] = session
                self._leave_memory()
            self._sessions.move_to_end(session_id)
            return session

    def in_memory(self) -> int:
        """How many sessions are held in memory now."""
        with self._guard:
            return len(self._sessions)

    def _leave_memory(self) -> None:
        """Over `kept`: the sessions used longest ago, with no request running in them
        and their lock free, leave memory (with their lock and journal state)."""
        excess = len(self._sessions) - self._kept
        for sid in list(self._sessions) if excess > 0 else ():
            if excess <= 0:
                break
            if self._running.get(sid):
                continue
            lock = self._locks.get(sid)
            if lock is not None:
                if not lock.acquire(blocking=False):
                    continue  # a change is being written now
                lock.release()
            del self._sessions[sid]
            self._locks.pop(sid, None)
            self._journals.pop(sid, None)
            excess -= 1
        if len(self._locks) > 2 * max(self._kept, len(self._sessions)):
            self._drop_spare_locks()

    def _drop_spare_locks(self) -> None:
        """Drop the free locks of sessions not in memory (taken by `lock` apart from
        a request, for a session that then left memory or never came): once they
        outnumber the sessions in memory, so the sweep costs O(1) per call."""
        for sid in [sid for sid in self._locks if sid not in self._sessions]:
            lock = self._locks[sid]
            if self._running.get(sid) or not lock.acquire(blocking=False):
                continue
            lock.release()
            del self._locks[sid]

    def _load(self, session_id: str) -> Session | None:
        path = self._path(session_id)
        damage: list[str] = []
        try:
            raw = load_session_file(path, damage)
        except FileNotFoundError:
            return None
        except OSError as exc:  # unreadable now (permissions, I/O): start afresh
            keep_unreadable(path, exc)
            return None
        except ValueError as exc:
            set_aside(path, f"not a session journal: {exc}")
            return None
        raw["session_id"] = session_id
        try:
            session = Session.from_json(raw)
        except (TypeError, AttributeError, ValueError) as exc:
            set_aside(path, f"not a session: {exc}")
            return None
        if damage:  # the whole journal aside, what was read goes on in its place
            set_aside(path, damage[0], then="the session goes on from what was read")
            try:
                _replace_file(path, _Journal(path).next_line(session)[0])
            except OSError:  # written whole at its next save
                pass
        return session

    @contextmanager
    def edit(self, session_id: str | None) -> Iterator[SessionEdit]:
        """A request's edit of the session `session_id` (see `get_or_create`).

        When the block ends, the turn's changes are made on the session and saved,
        under the session's lock, taken this once; a block that raises changes
        nothing. A full disk raises `StorageFull` then, the changes kept in memory.
        """
        with self._guard:  # kept in memory while the request runs
            sid = session_id or new_session_id()
            self._running[sid] = self._running.get(sid, 0) + 1
        try:
            edit = SessionEdit(self.get_or_create(sid))
            yield edit
            with self.lock(edit.session_id):
                edit._apply()
                self._write(edit.session)
        finally:
            with self._guard:
                left = self._running.pop(sid) - 1
                if left:
                    self._running[sid] = left

    def save(self, session: Session) -> None:
        """Write what changed since the last save: usually one appended line.

        A full disk raises `StorageFull`: the file keeps its last complete version
        (a delta cut short is ignored on load) and the next save writes it all.
        """
        with self.lock(session.session_id):
            self._write(session)

    def _write(self, session: Session) -> None:
        """`save`, with the session's lock held."""
        session.updated = time.time()
        sid = session.session_id
        # taken out while writing: if a write fails, the next save starts afresh
        # (with a snapshot, which also replaces a delta line cut short)
        journal = self._journals.pop(sid, None) or _Journal(self._path(sid))
        path = journal.path
        try:
            line, snapshot = journal.next_line(session)
            if not snapshot and not _append_line(path, line):
                line, snapshot = journal.snapshot(session), True
            if snapshot:
                _replace_file(path, line)
        except OSError as exc:
            if is_storage_full(exc):
                raise StorageFull.writing(path, exc) from exc
            raise
        journal.written(line, snapshot)
        with self._guard:
            if sid in self._sessions:  # a session saved after it left memory: no state
                self._journals[sid] = journal

    def ids(self) -> list[str]:
        on_disk = {p.stem for p in self._folder.glob("sess_*.json")}
        return sorted(on_disk | set(self._sessions))
