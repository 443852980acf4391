"""One owner per turn (S-42): a request records its changes to the session in a
`SessionEdit`, and the store applies and journals them once, under the session's lock.

The pipeline tests count how often the session's lock is taken and how many lines
the journal gains per request; the store tests read the turn and the session
before and after the block.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from aios_protocol.messages import ActionPost, InstructionRequest
from controller.pipeline.context import language_of
from controller.routing.router import PlannedTask
from controller.sessions import SessionStore, load_session_file
from tests.controller.fakes import STEP, asking_pipeline, make_pipeline, text_reply


class CountingLock:
    """A session's lock that counts how often it is entered."""

    def __init__(self, lock: threading.RLock, taken: Counter[str], session_id: str):
        self._lock = lock
        self._taken = taken
        self._session_id = session_id

    def __enter__(self) -> bool:
        self._taken[self._session_id] += 1
        return self._lock.__enter__()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._lock.__exit__(kind, error, trace)


def count_locks(store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Per session id, how often `store` takes that session's lock from now on."""
    taken: Counter[str] = Counter()
    lock = store.lock

    def counted(session_id: str) -> CountingLock:
        return CountingLock(lock(session_id), taken, session_id)

    monkeypatch.setattr(store, "lock", counted)
    return taken


def journal_lines(store_folder: Path, session_id: str) -> int:
    text = (store_folder / f"{session_id}.json").read_text(encoding="utf-8")
    return len(text.rstrip("\n").split("\n"))


def busy_app(name: str) -> Any:
    """An app that keeps state, asks for one round of steps, then answers."""

    def handle(body: dict[str, Any]) -> dict[str, Any]:
        if body["context"].get("tool_results") is None:
            return {
                "status": "ok",
                "view_type": "loading",
                "data": {},
                "steps": [STEP],
                "state": {"asked": body["instruction"]},
            }
        return text_reply(f"{name} done", message=f"{name} done", state={"rounds": 1})

    return handle


def test_each_request_takes_the_session_lock_once_and_writes_one_journal_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two tasks in parallel and one after them: each calls its app twice, runs a
    # round of steps and keeps state; still one lock and one journal line
    tasks = [
        PlannedTask("t1", "a", "x"),
        PlannedTask("t2", "b", "y"),
        PlannedTask("t3", "a", "z", ["t1", "t2"]),
    ]
    pipeline, apps, executor, _, store = make_pipeline(
        tmp_path, {"a": busy_app("a"), "b": busy_app("b")}, tasks
    )
    folder = tmp_path / "sessions"
    taken = count_locks(store, monkeypatch)

    first = pipeline.instruction(InstructionRequest(text="x, y, then z", language="en-US"))
    sid = first.session_id
    assert [t.status for t in first.tasks] == ["done"] * 3 and len(executor.runs) == 3
    assert taken[sid] == 1 and journal_lines(folder, sid) == 1

    pipeline.instruction(InstructionRequest(text="again", session_id=sid))
    assert taken[sid] == 2 and journal_lines(folder, sid) == 2

    pipeline.open_app("b", sid, "zh-CN")
    assert taken[sid] == 3 and journal_lines(folder, sid) == 3

    pipeline.action("a", ActionPost(action_id="play", session_id=sid))
    assert taken[sid] == 4 and journal_lines(folder, sid) == 4

    # what the turns recorded reached the session, in memory and on disk
    session = store.get(sid)
    assert session is not None
    assert [t["kind"] for t in session.history] == [
        "instruction",
        "instruction",
        "open",
        "action",
    ]
    done = [t["task_id"] for t in session.completed_tasks]  # t1 and t2 in either order
    assert (
        sorted(done[:2]) == sorted(done[3:5]) == ["t1", "t2"] and done[2::3] == ["t3"] * 2
    )
    assert session.current_tasks == []
    assert len(session.tool_calls_log) == 8  # a round per task, open and action
    assert session.agent_states == {"a": {"rounds": 1}, "b": {"asked": "", "rounds": 1}}
    assert session.context["language"] == "zh-CN" and session.context["last_app_id"] == "a"
    assert load_session_file(folder / f"{sid}.json")["history"] == session.history
    # the state an app kept reached its next call within the same steps loop
    assert apps.calls["a"][1]["context"]["cwd_state"]["asked"] == "x"


def test_a_paused_step_and_its_answer_take_the_lock_once_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline, _, executor, _, store = asking_pipeline(tmp_path)
    taken = count_locks(store, monkeypatch)

    response = pipeline.instruction(InstructionRequest(text="drop t"))
    task = response.tasks[0]
    assert task.result is not None and task.result.view_type == "confirm"
    assert taken[response.session_id] == 1
    reply, _, sid = pipeline.resume(task.result.data["confirmation_id"], "deny")
    assert reply.message == "Not dropped" and executor.runs == []
    assert sid == response.session_id and taken[sid] == 2
    session = store.get(sid)
    assert session is not None
    assert [t["kind"] for t in session.history] == ["instruction", "confirm"]
    assert journal_lines(tmp_path / "sessions", sid) == 2


def test_a_turn_sees_its_own_changes_and_the_session_gets_them_at_its_end(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path)
    session = store.get_or_create("sess_turn1")
    session.merge_agent_state("a", {"kept": 1, "dropped": 2})
    with store.edit("sess_turn1") as turn:
        assert turn.session is session
        turn.context["language"] = "en-US"
        turn.merge_agent_state("a", {"dropped": None, "new": 3})
        turn.merge_agent_state("b", {"x": "y"})
        turn.start_task({"task_id": "t1", "status": "running"})
        turn.log_tool_calls([{"tool": "file_read"}])
        turn.finish_task({"task_id": "t1", "status": "done"})
        turn.add_turn("instruction", "hi")
        # the turn reads its own changes over the session's …
        assert language_of(turn) == "en-US"
        assert turn.agent_state("a") == {"kept": 1, "new": 3}
        assert turn.agent_state("b") == {"x": "y"}
        # … which the session does not have yet, nor its file
        assert "language" not in session.context and session.history == []
        assert session.agent_states == {"a": {"kept": 1, "dropped": 2}}
        assert not (tmp_path / "sess_turn1.json").exists()
    assert session.context["language"] == "en-US"
    assert session.agent_states == {"a": {"kept": 1, "new": 3}, "b": {"x": "y"}}
    assert session.current_tasks == [] and session.completed_tasks[0]["status"] == "done"
    assert [t["text"] for t in session.history] == ["hi"]
    assert session.tool_calls_log == [{"tool": "file_read"}]
    assert load_session_file(tmp_path / "sess_turn1.json")["history"] == session.history


def test_a_turn_whose_block_raises_changes_nothing(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    with pytest.raises(RuntimeError), store.edit("sess_turn2") as turn:
        turn.add_turn("instruction", "lost")
        turn.context["last_app_id"] = "a"
        raise RuntimeError("a bug in the middle of a request")
    session = store.get_or_create("sess_turn2")
    assert session.history == [] and session.context == {}
    assert not (tmp_path / "sess_turn2.json").exists()


def test_other_requests_of_the_session_go_on_while_an_app_works(tmp_path: Path) -> None:
    """The lock is not held across a turn: opening another app answers while an
    instruction of the same session waits for its app."""
    inside, release = threading.Event(), threading.Event()

    def slow(body: dict[str, Any]) -> dict[str, Any]:
        inside.set()
        assert release.wait(10)
        return text_reply("slow done")

    pipeline, _, _, _, store = make_pipeline(
        tmp_path,
        {"slow": slow, "quick": lambda b: text_reply("quick")},
        [PlannedTask("t1", "slow", "wait")],
    )
    sid = store.get_or_create(None).session_id
    answers: list[str] = []
    worker = threading.Thread(
        target=lambda: answers.append(
            pipeline.instruction(InstructionRequest(text="wait", session_id=sid)).message
        )
    )
    worker.start()
    try:
        assert inside.wait(10)
        reply, _ = pipeline.open_app("quick", sid)
        assert reply.data == {"content": "quick"} and answers == []
    finally:
        release.set()
        worker.join(10)
    session = store.get(sid)
    assert session is not None
    assert [t["kind"] for t in session.history] == ["open", "instruction"]
    assert journal_lines(tmp_path / "sessions", sid) == 2


def test_sessions_leave_memory_when_many_and_come_back_from_disk(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, kept=4)
    for n in range(20):  # each instruction of a soak opens a new conversation
        with store.edit(f"sess_many{n}") as turn:
            turn.add_turn("instruction", f"hello {n}")
    assert store.in_memory() <= 4
    again = store.get("sess_many0")  # read again from its file, nothing lost
    assert again is not None
    assert [t["text"] for t in again.history] == ["hello 0"]
    with store.edit("sess_many0") as turn:
        turn.add_turn("instruction", "and again")
    reread = SessionStore(tmp_path).get("sess_many0")
    assert reread is not None
    assert [t["text"] for t in reread.history] == ["hello 0", "and again"]


def test_a_session_with_a_request_running_stays_in_memory(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, kept=1)
    with store.edit("sess_busy") as busy:
        for n in range(5):
            with store.edit(f"sess_other{n}") as turn:
                turn.add_turn("instruction", "x")
        assert store.get_or_create("sess_busy") is busy.session  # the same object
        busy.add_turn("instruction", "still here")
    assert [t["text"] for t in store.get("sess_busy").history] == ["still here"]
