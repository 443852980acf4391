"""The session file as a journal (S-42): a snapshot line, then one delta per save.

Every test reads real files in tmp_path back with `load_session_file` or a new
`SessionStore` (a restart) and compares with the session held in memory.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from controller.sessions import (
    JOURNAL_MAX_DELTAS,
    JOURNAL_MIN_BYTES,
    MAX_COMPLETED,
    MAX_HISTORY,
    MAX_TOOL_CALLS,
    Session,
    SessionStore,
    load_session_file,
)


def new_session(folder: Path) -> tuple[SessionStore, Session, Path]:
    """A store on `folder`, a new session in it and the path of its file."""
    store = SessionStore(folder)
    session = store.get_or_create(None)
    return store, session, folder / f"{session.session_id}.json"


def play(session: Session, i: int, calls: int = 7) -> None:
    """One instruction as the pipeline records it: a task, its steps, a turn."""
    task = {"task_id": f"t{i}", "app_id": "music_app", "status": "running"}
    session.start_task(task)
    session.log_tool_calls(
        [
            {"app_id": "music_app", "round": r, "tool": "file_read", "n": i}
            for r in range(calls)
        ]
    )
    session.finish_task({**task, "status": "done", "message": f"第 {i} 首\u2028好听"})
    session.merge_agent_state("music_app", {"last_played": f"song {i}", "volume": i % 10})
    session.add_turn("instruction", f"播放第 {i} 首", apps=["music_app"], tasks=[f"t{i}"])
    session.context["last_app_id"] = "music_app"


def dumped(session: Session) -> dict[str, Any]:
    """The session as JSON would give it back."""
    return json.loads(json.dumps(session.to_json(), ensure_ascii=False, default=str))


def lines(path: Path) -> list[str]:
    # not splitlines(): a journal line may hold a raw U+2028, as `play` writes
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n")


def test_many_saves_read_back_exactly_also_once_lists_drop_entries(tmp_path: Path) -> None:
    store, session, path = new_session(tmp_path)
    for i in range(MAX_HISTORY + 40):
        play(session, i)
        store.save(session)
        assert load_session_file(path) == dumped(session)
    assert (
        len(session.history) == MAX_HISTORY
        and len(session.completed_tasks) == MAX_COMPLETED
    )
    assert len(session.tool_calls_log) == MAX_TOOL_CALLS
    assert session.history[0]["text"] == "播放第 40 首"

    restored = SessionStore(tmp_path).get(session.session_id)
    assert restored is not None
    assert dumped(restored) == dumped(session)
    assert [f.name for f in tmp_path.iterdir()] == [path.name]  # one file, no spare


def test_a_save_appends_one_small_delta_line(tmp_path: Path) -> None:
    store, session, path = new_session(tmp_path)
    for i in range(MAX_HISTORY + 5):
        play(session, i)
    store.save(session)
    assert len(lines(path)) == 1  # a new session starts with a snapshot
    snapshot_bytes = path.stat().st_size

    play(session, 1000)
    store.save(session)
    first, delta = lines(path)
    assert json.loads(first)["history"][-1]["text"] == f"播放第 {MAX_HISTORY + 4} 首"
    change = json.loads(delta)
    assert change["-history"] == 1 and change["+history"] == [session.history[-1]]
    assert change["-tool_calls_log"] == 7 and len(change["+tool_calls_log"]) == 7
    assert change["+completed_tasks"] == [session.completed_tasks[-1]]
    assert change["agent_states"] == session.agent_states
    assert "updated" in change and "created" not in change and "session_id" not in change
    assert len(delta.encode()) * 20 < snapshot_bytes


def test_compaction_bounds_the_number_of_lines(tmp_path: Path) -> None:
    store, session, path = new_session(tmp_path)
    counts = []
    for i in range(3 * JOURNAL_MAX_DELTAS):
        session.add_turn("instruction", f"第 {i} 句")
        store.save(session)
        counts.append(len(lines(path)))
    assert max(counts) == JOURNAL_MAX_DELTAS + 1
    assert counts.count(1) == 3  # the first save and two compactions
    assert load_session_file(path) == dumped(session)


def test_compaction_bounds_the_bytes_of_large_deltas(tmp_path: Path) -> None:
    store, session, path = new_session(tmp_path)
    big = "长" * 2000  # about 6 KB of UTF-8 per turn
    counts = []
    for i in range(60):
        session.add_turn("instruction", f"{i} {big}")
        store.save(session)
        snapshot = len(lines(path)[0].encode())
        # the deltas never outgrow the snapshot (or JOURNAL_MIN_BYTES)
        assert path.stat().st_size <= snapshot + 1 + max(snapshot, JOURNAL_MIN_BYTES)
        assert load_session_file(path) == dumped(session)
        counts.append(len(lines(path)))
    assert counts.count(1) > 2 and max(counts) < JOURNAL_MAX_DELTAS  # bytes decided


def test_a_replaced_or_cleared_list_writes_a_snapshot(tmp_path: Path) -> None:
    store, session, path = new_session(tmp_path)
    for i in range(5):
        play(session, i)
        store.save(session)
    assert len(lines(path)) == 5
    session.tool_calls_log = [{"tool": "replaced"}]
    store.save(session)
    assert len(lines(path)) == 1
    assert load_session_file(path)["tool_calls_log"] == [{"tool": "replaced"}]

    play(session, 5)
    store.save(session)
    assert len(lines(path)) == 2
    session.history.clear()
    store.save(session)
    assert len(lines(path)) == 1 and load_session_file(path) == dumped(session)

    # an entry swapped in the middle is not an append either
    for i in range(6, 9):
        play(session, i)
        store.save(session)
    session.completed_tasks[1] = {"task_id": "edited"}
    store.save(session)
    assert len(lines(path)) == 1 and load_session_file(path) == dumped(session)


def test_a_front_trim_other_than_the_bounds_replays_exactly(tmp_path: Path) -> None:
    store, session, path = new_session(tmp_path)
    for i in range(10):
        play(session, i)
    store.save(session)
    del session.history[:4]  # shorter than MAX_HISTORY: only an explicit count replays it
    session.add_turn("open", "")
    store.save(session)
    assert len(lines(path)) == 2
    assert json.loads(lines(path)[1])["-history"] == 4
    assert load_session_file(path)["history"] == dumped(session)["history"]


def test_a_torn_last_line_keeps_everything_before_it(tmp_path: Path) -> None:
    store, session, path = new_session(tmp_path)
    for i in range(4):
        play(session, i)
        store.save(session)
    before = dumped(session)
    play(session, 4)
    store.save(session)
    data = path.read_bytes()
    last = data.rstrip(b"\n").rsplit(b"\n", 1)[1]
    cut = data[: len(data) - len(last) // 2 - 1]  # a crash halfway through the append
    path.write_bytes(cut + "首".encode()[:2])  # ending inside a character
    assert load_session_file(path) == before

    # a restart continues the session from there; its first save heals the file
    after = SessionStore(tmp_path)
    restored = after.get(session.session_id)
    assert restored is not None and dumped(restored)["history"] == before["history"]
    play(restored, 99)
    after.save(restored)
    assert len(lines(path)) == 1
    play(restored, 100)
    after.save(restored)
    assert load_session_file(path) == dumped(restored)
    assert [t["text"] for t in restored.history][-2:] == ["播放第 99 首", "播放第 100 首"]


def test_an_unparsable_line_ends_the_replay_there(tmp_path: Path) -> None:
    store, session, path = new_session(tmp_path)
    play(session, 0)
    store.save(session)
    play(session, 1)
    store.save(session)
    kept = dumped(session)
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"-history": 99}\n')  # drops more than there is: malformed
        handle.write('{"context": {"never": "applied"}}\n')
    assert load_session_file(path) == kept
    path.write_text(lines(path)[0] + "\n[1, 2]\n" + lines(path)[1] + "\n")
    assert len(load_session_file(path)["history"]) == 1  # stops at the non-object


def test_legacy_single_object_files_load_and_continue(tmp_path: Path) -> None:
    old = Session(session_id="sess_legacy1")
    for i in range(MAX_HISTORY + 3):
        play(old, i)
    raw = dumped(old)
    raw["history"] = raw["history"] * 2  # written by a version with other bounds
    (tmp_path / "sess_legacy1.json").write_text(json.dumps(raw, ensure_ascii=False))
    (tmp_path / "sess_legacy2.json").write_text(
        json.dumps({**raw, "session_id": "sess_legacy2"}, ensure_ascii=False, indent=2)
    )
    assert len(lines(tmp_path / "sess_legacy2.json")) > 100
    store = SessionStore(tmp_path)
    for sid in ("sess_legacy1", "sess_legacy2"):
        loaded = load_session_file(tmp_path / f"{sid}.json")
        assert loaded["history"] == raw["history"][-MAX_HISTORY:]
        assert loaded["tool_calls_log"] == raw["tool_calls_log"]
        session = store.get(sid)
        assert (
            session is not None
            and session.history[-1]["text"] == raw["history"][-1]["text"]
        )
        play(session, 500)
        store.save(session)
        play(session, 501)
        store.save(session)
        assert len(lines(tmp_path / f"{sid}.json")) == 2  # rewritten as a journal
        assert load_session_file(tmp_path / f"{sid}.json") == dumped(session)
    assert store.ids() == ["sess_legacy1", "sess_legacy2"]


def test_restart_and_continue_keeps_all_data_in_order(tmp_path: Path) -> None:
    first = SessionStore(tmp_path)
    session = first.get_or_create("sess_restart1")
    for i in range(30):
        play(session, i)
        first.save(session)

    second = SessionStore(tmp_path)
    again = second.get("sess_restart1")
    assert again is not None and dumped(again) == dumped(session)
    for i in range(30, 130):
        play(again, i)
        second.save(again)

    third = SessionStore(tmp_path).get("sess_restart1")
    assert third is not None and dumped(third) == dumped(again)
    assert [t["text"] for t in third.history] == [f"播放第 {i} 首" for i in range(30, 130)]
    assert [c["task_id"] for c in third.completed_tasks] == [
        f"t{i}" for i in range(30, 130)
    ]
    assert (
        third.tool_calls_log[-1]["n"] == 129 and len(third.tool_calls_log) == MAX_TOOL_CALLS
    )


def test_a_task_running_at_a_restart_ends_as_interrupted(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get_or_create(None)
    for i in range(MAX_COMPLETED):
        play(session, i)
        store.save(session)
    session.start_task({"task_id": "t_open", "app_id": "a", "status": "running"})
    store.save(session)
    restored = SessionStore(tmp_path).get(session.session_id)
    assert restored is not None and restored.current_tasks == []
    assert len(restored.completed_tasks) == MAX_COMPLETED
    assert restored.completed_tasks[-1] == {
        "task_id": "t_open",
        "app_id": "a",
        "status": "error",
        "interrupted": True,
    }


def test_a_file_removed_between_saves_is_written_whole_again(tmp_path: Path) -> None:
    store, session, path = new_session(tmp_path)
    play(session, 0)
    store.save(session)
    path.unlink()
    play(session, 1)
    store.save(session)
    assert len(lines(path)) == 1 and load_session_file(path) == dumped(session)


def test_concurrent_saves_from_threads(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sids = ["sess_threadA", "sess_threadB"]
    errors: list[BaseException] = []

    def work(sid: str, offset: int) -> None:
        try:
            for i in range(150):
                with store.lock(sid):  # as the pipeline does: change and save under it
                    session = store.get_or_create(sid)
                    play(session, offset + i, calls=3)
                    store.save(session)
        except BaseException as exc:  # noqa: BLE001 - reported by the assert below
            errors.append(exc)

    threads = [
        threading.Thread(target=work, args=(sid, k)) for sid in sids for k in (0, 1000)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    restarted = SessionStore(tmp_path)
    for sid in sids:
        live = store.get(sid)
        assert live is not None and len(live.history) == MAX_HISTORY
        assert load_session_file(tmp_path / f"{sid}.json") == dumped(live)
        again = restarted.get(sid)
        assert again is not None and dumped(again)["history"] == dumped(live)["history"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{sid}.json" for sid in sids]
