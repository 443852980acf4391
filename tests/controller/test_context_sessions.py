"""Context building (S-41), sessions (S-42) and the event bus, without HTTP."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from aios_protocol.errors import InvalidRequest
from aios_protocol.messages import ATOMIC_TOOLS
from controller.events import EventBus, ExecutorEventRelay, sse_stream
from controller.pipeline.context import (
    ContextBuilder,
    language_of,
    summarise_history,
    tr,
    workspace_files,
)
from controller.sessions import MAX_HISTORY, Session, SessionStore, load_session_file


def test_workspace_files_are_top_level_sorted_bounded(tmp_path: Path) -> None:
    for name in ["b.txt", "a.txt", ".hidden", "sub"]:
        (tmp_path / name).mkdir() if name == "sub" else (tmp_path / name).write_text("x")
    (tmp_path / "sub" / "deep.txt").write_text("x")
    assert workspace_files(tmp_path) == ["a.txt", "b.txt", "sub"]
    assert workspace_files(tmp_path, limit=2) == ["a.txt", "b.txt"]
    assert workspace_files(tmp_path / "missing") == []


def test_workspace_listing_is_reused_only_while_the_folder_is_unchanged(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("x")
    settled = time.time_ns() - 3_600 * 10**9  # changed an hour ago: safe to reuse
    os.utime(tmp_path, ns=(settled, settled))
    assert workspace_files(tmp_path) == ["a.txt"]
    # a name added behind the cache's back (mtime put back): the listing is reused
    (tmp_path / "b.txt").write_text("x")
    os.utime(tmp_path, ns=(settled, settled))
    assert workspace_files(tmp_path) == ["a.txt"]
    # any real change moves the mtime: read again
    (tmp_path / "c.txt").write_text("x")
    assert workspace_files(tmp_path) == ["a.txt", "b.txt", "c.txt"]


def test_a_folder_changed_just_now_is_never_served_stale(tmp_path: Path) -> None:
    # within one clock tick two changes can share an mtime: such a listing is not kept
    for i in range(50):
        (tmp_path / f"f{i:02d}").write_text("x")
        assert workspace_files(tmp_path)[-1] == f"f{i:02d}"


def test_history_summary_is_deterministic() -> None:
    session = Session(session_id="sess_abc123")
    assert summarise_history(session) == ""
    session.add_turn(
        "instruction", "帮我播放周杰伦的歌", apps=["music_app"], message="找到 2 首"
    )
    session.add_turn("open", "", apps=["code_app"])
    session.add_turn("instruction", "跟我打个招呼", apps=["hello_app"], message="")
    summary = summarise_history(session)
    assert summary == "用户刚问过“跟我打个招呼”，之前问过“帮我播放周杰伦的歌”"
    assert summary == summarise_history(session)
    session.context["llm_summary"] = "用户在听周杰伦"
    assert summarise_history(session) == "用户在听周杰伦"


def test_available_tools_are_cached_and_fall_back_when_the_executor_fails() -> None:
    asked: list[str] = []
    broken = {"on": False}

    def list_tools(app_id: str) -> list[str]:
        asked.append(app_id)
        if broken["on"]:
            raise ConnectionError("executor restarting")
        return ["file_read", "my_tool"]

    builder = ContextBuilder(list_tools)
    session = Session(session_id="sess_abc123", agent_states={"a": {"last_played": "x"}})
    ctx = builder.build(app_id="a", role="r", workdir=None, session=session)
    builder.build(app_id="a", role="r", workdir=None, session=session)
    assert ctx.available_tools == ["file_read", "my_tool"] and asked == ["a"]
    assert ctx.cwd_state == {"files": [], "last_played": "x"}
    assert ctx.tool_results is None and "upstream" not in ctx.dump()
    builder.invalidate("a")
    broken["on"] = True
    assert builder.available_tools("a") == list(ATOMIC_TOOLS)


def test_session_roundtrip_bounds_and_interrupted_tasks(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get_or_create(None)
    assert session.session_id.startswith("sess_")
    for i in range(MAX_HISTORY + 10):
        session.add_turn("instruction", f"turn {i}")
    session.start_task({"task_id": "t1", "app_id": "a", "status": "running"})
    session.merge_agent_state("a", {"last_played": "x", "volume": 3})
    session.merge_agent_state("a", {"volume": None})
    session.log_tool_calls([{"tool": "file_read", "status": "ok"}])
    store.save(session)
    raw = load_session_file(tmp_path / f"{session.session_id}.json")
    assert set(raw) >= {
        "session_id",
        "history",
        "current_tasks",
        "completed_tasks",
        "context",
        "agent_states",
        "tool_calls_log",
    }
    assert (tmp_path / f"{session.session_id}.json").stat().st_mode & 0o777 == 0o600

    restored = SessionStore(tmp_path).get(session.session_id)
    assert restored is not None
    assert len(restored.history) == MAX_HISTORY
    assert restored.history[-1]["text"] == f"turn {MAX_HISTORY + 9}"
    assert restored.agent_states == {"a": {"last_played": "x"}}
    assert restored.current_tasks == []
    assert restored.completed_tasks[-1]["interrupted"] is True
    assert restored.tool_calls_log == [{"tool": "file_read", "status": "ok"}]


def test_saved_file_is_the_whole_session_after_every_turn(tmp_path: Path) -> None:
    """Saves journal only what changed; the file must still read back as a full
    dump, also once the bounded lists start dropping entries at the front."""
    store = SessionStore(tmp_path)
    session = store.get_or_create(None)
    path = tmp_path / f"{session.session_id}.json"
    for i in range(MAX_HISTORY + 30):
        session.add_turn("instruction", f"第 {i} 句", apps=["a"])
        session.finish_task({"task_id": "t1", "status": "done", "n": i})
        session.log_tool_calls([{"tool": "file_read", "n": i}] * (i % 3))
        session.merge_agent_state("a", {"n": i})
        if i == 50:
            session.tool_calls_log = [{"tool": "replaced"}]
        store.save(session)
        expected = json.dumps(session.to_json(), ensure_ascii=False, default=str)
        assert load_session_file(path) == json.loads(expected)


def test_a_save_cut_short_keeps_the_complete_new_copy(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get_or_create(None)
    session.add_turn("instruction", "播放七里香")
    store.save(session)
    path = tmp_path / f"{session.session_id}.json"
    path.rename(tmp_path / f".{session.session_id}.json.new")  # removed, not renamed yet
    restored = SessionStore(tmp_path).get(session.session_id)
    assert restored is not None and restored.history[0]["text"] == "播放七里香"
    assert store.ids() == [session.session_id]


def test_session_ids_are_checked(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    assert store.get_or_create("sess_abc123").session_id == "sess_abc123"
    with pytest.raises(InvalidRequest):
        store.get_or_create("../../etc/passwd")
    assert store.get("../x") is None
    (tmp_path / "sess_broken1.json").write_text("{half")
    assert store.get_or_create("sess_broken1").history == []  # unreadable → fresh


def test_event_bus_sequence_ring_and_wait() -> None:
    bus = EventBus(capacity=3)
    for i in range(5):
        bus.publish("notify", {"i": i})
    assert [e.seq for e in bus.since(0)] == [3, 4, 5]
    assert bus.wait_since(5, timeout=0.01) == []
    got: list[int] = []

    def waiter() -> None:
        got.extend(e.seq for e in bus.wait_since(5, timeout=5))

    thread = threading.Thread(target=waiter)
    thread.start()
    bus.publish("speak", {"text": "hi"})
    thread.join(5)
    assert got == [6]


def test_sse_frames_carry_id_and_event_json() -> None:
    bus = EventBus()
    bus.publish("speak", {"text": "你好"}, app_id="hello_app")
    frames = list(sse_stream(bus, 0, limit=1))
    assert frames[0].startswith("retry:")
    frame = frames[1]
    assert frame.startswith("id: 1\n") and frame.endswith("\n\n")
    data = json.loads(frame.split("data: ", 1)[1])
    assert data == {
        "type": "speak",
        "seq": 1,
        "app_id": "hello_app",
        "data": {"text": "你好"},
    }


def test_executor_relay_republishes_notify_events() -> None:
    bus = EventBus()
    pages = iter(
        [
            ([{"type": "notify", "app_id": "a", "data": {"title": "t", "body": "b"}}], 1),
            ConnectionError("executor restarting"),
        ]
    )
    seen: list[int] = []

    def fetch(since: int, wait: float) -> tuple[list[dict], int]:
        seen.append(since)
        item = next(pages, None)
        if item is None:
            threading.Event().wait(wait)
            return [], since
        if isinstance(item, Exception):
            raise item
        return item

    relay = ExecutorEventRelay(bus, fetch, wait=0.05)
    relay.start()
    events = bus.wait_since(0, timeout=5)
    relay.stop()
    assert events[0].type == "notify" and events[0].data["body"] == "b"
    assert events[0].app_id == "a"


def test_the_builders_default_summary_is_summarise_history(tmp_path: Path) -> None:
    builder = ContextBuilder(lambda app_id: ["file_read"])
    session = Session(session_id="sess_summary1")
    for i in range(40):
        session.add_turn("instruction" if i % 3 else "open", f"问题 {i}")
        context = builder.build(app_id="a", role="", workdir=tmp_path, session=session)
        assert context.history_summary == summarise_history(session)
    session.context["llm_summary"] = "用户在听周杰伦"
    session.add_turn("instruction", "再来一首")
    context = builder.build(app_id="a", role="", workdir=tmp_path, session=session)
    assert context.history_summary == "用户在听周杰伦" == summarise_history(session)


def test_the_language_is_the_sessions_else_the_settings_else_chinese() -> None:
    session = Session(session_id="sess_language1")
    assert language_of(None) == language_of(session) == "zh-CN"
    assert language_of(None, "en-US") == language_of(session, "en-US") == "en-US"
    session.context["language"] = "en-US"  # what the desktop said
    assert language_of(session, "zh-CN") == "en-US"
    session.context["language"] = "fr-FR"  # not one the system speaks
    assert language_of(session, "") == "zh-CN"
    builder = ContextBuilder(lambda app_id: [])
    builder.default_language = lambda: "en-US"
    assert builder.language(None) == "en-US"
    assert (tr("en-US", "你好", "Hello"), tr("zh-CN", "你好", "Hello")) == ("Hello", "你好")
