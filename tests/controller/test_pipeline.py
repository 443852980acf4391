"""The pipeline without HTTP: the steps loop, task DAGs, actions, state and events.

Apps are plain functions from a `HandleRequest` dict to a reply dict; the executor
is a function from a `RunRequest` dict to a `RunResponse` dict.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aios_protocol.errors import AppUnreachable, NotFound
from aios_protocol.messages import ActionPost, InstructionRequest
from aios_runtime.json_client import PeerTimeout
from controller.clients import ExecutorClient, ExecutorUnreachable
from controller.pipeline.actions import (
    ACTION_PAYLOAD_KEYS,
    action_request_for,
)
from controller.pipeline.cancel import Cancelled
from controller.pipeline.failures import failure_view
from controller.routing.router import PlannedTask, RoutePlan
from controller.sessions import SessionStore
from tests.controller.fakes import STEP, asking_pipeline, make_pipeline, text_reply
from tests.procs import free_port


def template_app(body: dict[str, Any]) -> dict[str, Any]:
    """The spec's verbose main.py: a list view WITH steps on every reply."""
    return {
        "status": "ok",
        "view_type": "list",
        "data": {"items": []},
        "actions": [{"type": "button", "label": "刷新", "action_id": "refresh"}],
        "steps": [STEP],
        "message": "已完成",
    }


def test_reply_without_steps_is_final(tmp_path: Path) -> None:
    pipeline, apps, executor, _, _ = make_pipeline(
        tmp_path,
        {"hello": lambda b: text_reply("你好")},
        [PlannedTask("t1", "hello", "hi")],
    )
    response = pipeline.instruction(InstructionRequest(text="hi"))
    assert [t.status for t in response.tasks] == ["done"]
    assert response.tasks[0].result.data == {"content": "你好"}
    assert len(apps.calls["hello"]) == 1 and executor.runs == []
    assert response.session_id.startswith("sess_")


def test_template_that_always_returns_steps_stops_after_one_round(tmp_path: Path) -> None:
    pipeline, apps, executor, _, _ = make_pipeline(
        tmp_path, {"tpl": template_app}, [PlannedTask("t1", "tpl", "刷新")]
    )
    response = pipeline.instruction(InstructionRequest(text="刷新"))
    result = response.tasks[0].result
    assert result.status == "ok" and result.view_type == "list"
    assert result.steps == []  # not executed again, not handed to the desktop
    assert len(executor.runs) == 1
    assert len(apps.calls["tpl"]) == 2
    first, second = apps.calls["tpl"]
    assert "tool_results" not in first["context"]
    assert second["context"]["tool_results"]["step_1"]["status"] == "ok"
    assert first["instruction"] == second["instruction"] == "刷新"


def test_loading_replies_run_again_until_final(tmp_path: Path) -> None:
    replies = iter(
        [
            {"status": "ok", "view_type": "loading", "data": {}, "steps": [STEP]},
            {
                "status": "ok",
                "view_type": "loading",
                "data": {},
                "steps": [{"step_id": 1, "tool": "file_list", "args": {}}],
            },
            text_reply("done"),
        ]
    )
    pipeline, apps, executor, _, _ = make_pipeline(
        tmp_path, {"a": lambda b: next(replies)}, [PlannedTask("t1", "a", "go")]
    )
    result = pipeline.instruction(InstructionRequest(text="go")).tasks[0].result
    assert result.data == {"content": "done"}
    assert [r["steps"][0]["tool"] for r in executor.runs] == ["http_request", "file_list"]
    third = apps.calls["a"][2]["context"]["tool_results"]
    assert third["step_1"]["tool"] == "file_list"  # the latest round's results
    # the app is told which round it is in, and which apps are installed
    rounds = [call["context"].get("step_round", 0) for call in apps.calls["a"]]
    assert rounds == [0, 1, 2]
    installed = apps.calls["a"][0]["context"]["installed_apps"]
    assert installed == [{"id": "a", "name": "A", "system_role": None}]


def test_loading_reply_repeating_its_plan_is_final(tmp_path: Path) -> None:
    loading = {"status": "ok", "view_type": "loading", "data": {}, "steps": [STEP]}
    pipeline, apps, executor, _, _ = make_pipeline(
        tmp_path, {"a": lambda b: loading}, [PlannedTask("t1", "a", "go")]
    )
    result = pipeline.instruction(InstructionRequest(text="go")).tasks[0].result
    assert result.view_type == "loading"
    assert len(executor.runs) == 1 and len(apps.calls["a"]) == 2


def always_planning() -> Callable[[dict[str, Any]], dict[str, Any]]:
    """An app that answers every call with a new plan, never with a result."""
    counter = iter(range(1, 100))

    def forever(body: dict[str, Any]) -> dict[str, Any]:
        n = next(counter)
        return {
            "status": "ok",
            "view_type": "loading",
            "data": {},
            "steps": [{"step_id": 1, "tool": "file_read", "args": {"path": f"{n}.txt"}}],
        }

    return forever


def test_rounds_are_capped_with_an_error_view(tmp_path: Path) -> None:
    forever = always_planning()
    pipeline, _, executor, _, _ = make_pipeline(
        tmp_path, {"a": forever}, [PlannedTask("t1", "a", "go")], max_rounds=2
    )
    task = pipeline.instruction(InstructionRequest(text="go")).tasks[0]
    assert task.status == "error"
    assert task.result.data["code"] == "too_many_step_rounds"
    assert len(executor.runs) == 2


def test_failures_become_error_views_for_that_task_only(tmp_path: Path) -> None:
    def unreachable(body: dict[str, Any]) -> dict[str, Any]:
        raise AppUnreachable("app b is not reachable")

    pipeline, _, _, _, _ = make_pipeline(
        tmp_path,
        {
            "a": lambda b: text_reply("fine"),
            "b": unreachable,
            "c": lambda b: {"status": "ok", "data": "not an object"},
        },
        [
            PlannedTask("t1", "a", "one"),
            PlannedTask("t2", "b", "two"),
            PlannedTask("t3", "c", "three"),
        ],
    )
    tasks = pipeline.instruction(InstructionRequest(text="x")).tasks
    assert [t.status for t in tasks] == ["done", "error", "error"]
    assert tasks[1].result.data["code"] == "app_unreachable"
    assert tasks[2].result.data["code"] == "bad_app_reply"
    # a plain sentence for the user, the technical text folded away in `detail`
    assert tasks[1].result.message == "无法连接「B」。"
    assert tasks[1].result.detail == "app b is not reachable"
    assert tasks[2].result.message == "「C」的回复无法读取。"
    assert "view_type" in tasks[2].result.detail


def test_unavailable_app_answers_at_once_with_a_clear_error(tmp_path: Path) -> None:
    pipeline, apps, _, _, _ = make_pipeline(
        tmp_path, {"a": lambda b: text_reply("x")}, [PlannedTask("t1", "a", "go")]
    )
    apps.unavailable.add("a")
    task = pipeline.instruction(InstructionRequest(text="go")).tasks[0]
    assert task.result.data["code"] == "app_unavailable"
    assert task.result.message == "「A」现在不可用，请稍后再试。"
    assert "restarting" in task.result.detail
    reply, _ = pipeline.open_app("a", None)
    assert reply.data["code"] == "app_unavailable"
    with pytest.raises(NotFound):
        pipeline.open_app("nope", None)


def test_dependent_task_runs_after_and_sees_upstream(tmp_path: Path) -> None:
    order: list[str] = []

    def first(body: dict[str, Any]) -> dict[str, Any]:
        order.append("a")
        return text_reply("a-result", message="A done")

    def second(body: dict[str, Any]) -> dict[str, Any]:
        order.append("b")
        upstream = body["context"]["upstream"]
        return text_reply(f"saw {upstream[0]['data']['content']}", message="B done")

    pipeline, _, _, _, _ = make_pipeline(
        tmp_path,
        {"a": first, "b": second},
        [PlannedTask("t1", "a", "do a"), PlannedTask("t2", "b", "then b", ["t1"])],
    )
    response = pipeline.instruction(InstructionRequest(text="do a, then b"))
    assert order == ["a", "b"]
    assert response.tasks[1].depends_on == ["t1"]
    assert response.tasks[1].result.data == {"content": "saw a-result"}
    assert response.message == "A done；B done"


def test_independent_tasks_run_in_parallel(tmp_path: Path) -> None:
    barrier = threading.Barrier(2, timeout=5)

    def waits(body: dict[str, Any]) -> dict[str, Any]:
        barrier.wait()  # only returns if both apps are called at the same time
        return text_reply("ok")

    pipeline, _, _, _, _ = make_pipeline(
        tmp_path,
        {"a": waits, "b": waits},
        [PlannedTask("t1", "a", "x"), PlannedTask("t2", "b", "y")],
    )
    tasks = pipeline.instruction(InstructionRequest(text="x and y")).tasks
    assert [t.status for t in tasks] == ["done", "done"]


def test_failed_dependency_skips_the_dependent_task(tmp_path: Path) -> None:
    pipeline, apps, _, _, _ = make_pipeline(
        tmp_path,
        {
            "a": lambda b: {"status": "error", "view_type": "error", "data": {"code": "x"}},
            "b": lambda b: text_reply("never"),
        },
        [PlannedTask("t1", "a", "x"), PlannedTask("t2", "b", "y", ["t1"])],
    )
    response = pipeline.instruction(InstructionRequest(text="x then y"))
    tasks = response.tasks
    # not run, and not a second failure to read: the first one says what went wrong
    assert (tasks[1].status, tasks[1].result) == ("skipped", None)
    assert apps.calls["b"] == []


def test_a_reply_that_says_it_did_not_do_it_is_a_failed_task(tmp_path: Path) -> None:
    """An `ok` reply with the notice `error` answered but did not do what was asked (a
    skill whose program exited non-zero): the task failed, and one that waited for it
    does not run; a `warning` (done, not all of it) stays done."""
    not_done = {**text_reply("the program exited with 2"), "notice": "error"}
    partly = {**text_reply("one source was unreachable"), "notice": "warning"}
    pipeline, apps, _, _, _ = make_pipeline(
        tmp_path,
        {
            "a": lambda b: not_done,
            "b": lambda b: text_reply("never"),
            "c": lambda b: partly,
        },
        [
            PlannedTask("t1", "a", "x"),
            PlannedTask("t2", "b", "y", ["t1"]),
            PlannedTask("t3", "c", "z"),
        ],
    )
    tasks = pipeline.instruction(InstructionRequest(text="x then y, and z")).tasks
    assert [t.status for t in tasks] == ["error", "skipped", "done"]
    assert tasks[0].result.notice == "error"  # the app's own answer is what is shown
    assert apps.calls["b"] == []


def test_no_match_says_where_to_see_what_the_apps_can_do(tmp_path: Path) -> None:
    pipeline, _, _, _, _ = make_pipeline(tmp_path, {"a": lambda b: text_reply("x")}, [])
    response = pipeline.instruction(InstructionRequest(text="???"))
    assert response.tasks == []
    assert response.message == "没有应用能做这件事。开始菜单里列出了每个应用能做什么。"


def test_context_carries_s41_fields_and_app_state(tmp_path: Path) -> None:
    replies = iter([text_reply("1", state={"last_played": "七里香"}), text_reply("2")])
    pipeline, apps, _, _, sessions = make_pipeline(
        tmp_path, {"m": lambda b: next(replies)}, [PlannedTask("t1", "m", "播放")]
    )
    sid = pipeline.instruction(InstructionRequest(text="播放七里香")).session_id
    pipeline.instruction(InstructionRequest(text="再放一次", session_id=sid))
    context = apps.calls["m"][1]["context"]
    assert context["role"] == "role of m"
    assert Path(context["workdir"]).is_absolute()
    assert context["cwd_state"] == {"files": ["greeting.txt"], "last_played": "七里香"}
    assert context["available_tools"] == ["file_read", "shell_exec"]
    assert context["session_id"] == sid
    assert "播放七里香" in context["history_summary"]
    restored = SessionStore(tmp_path / "sessions").get(sid)
    assert restored is not None
    assert restored.agent_states == {"m": {"last_played": "七里香"}}
    assert [t["text"] for t in restored.history] == ["播放七里香", "再放一次"]


def test_events_are_published(tmp_path: Path) -> None:
    replies = iter(
        [
            {"status": "ok", "view_type": "loading", "data": {}, "steps": [STEP]},
            text_reply(
                "moved",
                message="已移动",
                ui_commands=[{"op": "move", "id": "btn_play", "x": 20, "y": 20}],
            ),
        ]
    )
    pipeline, _, _, bus, _ = make_pipeline(
        tmp_path, {"s": lambda b: next(replies)}, [PlannedTask("t1", "s", "移动")]
    )
    pipeline.instruction(InstructionRequest(text="移动"))
    events = bus.since(0)
    assert [e.type for e in events] == [
        "task_started",
        "step_done",
        "ui_commands",
        "speak",
        "task_done",
    ]
    assert [e.seq for e in events] == [1, 2, 3, 4, 5]
    assert events[2].data["commands"][0]["id"] == "btn_play"
    assert events[3].data["text"] == "已移动"
    assert events[1].data["tool"] == "http_request"


def test_the_desktops_language_reaches_every_later_call_of_the_session(
    tmp_path: Path,
) -> None:
    pipeline, apps, _, _, sessions = make_pipeline(
        tmp_path, {"m": lambda b: text_reply("ok")}, [PlannedTask("t1", "m", "播放")]
    )
    first = pipeline.instruction(InstructionRequest(text="播放"))
    assert apps.calls["m"][0]["context"]["language"] == "zh-CN"  # nothing said: Chinese
    pipeline._contexts.default_language = lambda: "en-US"  # the settings' ui_language
    pipeline.open_app("m", first.session_id)
    assert apps.calls["m"][1]["context"]["language"] == "en-US"
    pipeline._contexts.default_language = lambda: ""
    sid = pipeline.instruction(InstructionRequest(text="播放", language="en-US")).session_id
    _, sid = pipeline.action("m", ActionPost(action_id="play", session_id=sid))
    pipeline.open_app("m", sid)
    assert [c["context"]["language"] for c in apps.calls["m"][2:]] == ["en-US"] * 3
    assert "language" not in apps.calls["m"][3]["action_request"]
    restored = SessionStore(tmp_path / "sessions").get(sid)
    assert restored is not None and restored.context["language"] == "en-US"
    pipeline.open_app("m", sid, "zh-CN")  # the desktop switched back
    assert apps.calls["m"][-1]["context"]["language"] == "zh-CN"


def test_action_is_forwarded_with_only_its_payload_key(tmp_path: Path) -> None:
    pipeline, apps, _, _, _ = make_pipeline(tmp_path, {"m": lambda b: text_reply("played")})
    post = ActionPost(
        action_id="play", type="button", params={"song_id": "s_001"}, value="stray"
    )
    reply, sid = pipeline.action("m", post)
    assert reply.data == {"content": "played"}
    body = apps.calls["m"][0]
    assert body["instruction"] is None
    assert body["action_request"] == {
        "action_id": "play",
        "params": {"song_id": "s_001"},
        "session_id": sid,
    }


@pytest.mark.parametrize(
    "kind,payload",
    [
        ("button", {"params": {"a": 1}}),
        ("submit_form", {"form_values": {"keyword": "周杰伦"}}),
        ("select", {"selected": "无损"}),
        ("checkbox", {"checked": ["a", "b"]}),
        ("radio", {"selected": "x"}),
        ("input", {"value": "abc"}),
        ("link", {"href": "https://example.com"}),
        ("toggle", {"on": True}),
        ("slider", {"value": 42}),
        ("datetime", {"value": "2026-08-14T22:00"}),
    ],
)
def test_action_payload_key_per_type(kind: str, payload: dict[str, Any]) -> None:
    assert set(payload) == {ACTION_PAYLOAD_KEYS[kind]}
    post = ActionPost(action_id="x", type=kind, **payload)
    request = action_request_for(post, "sess_abc123").dump()
    assert request == {"action_id": "x", "session_id": "sess_abc123", **payload}


def test_open_sends_the_empty_instruction(tmp_path: Path) -> None:
    pipeline, apps, _, _, _ = make_pipeline(tmp_path, {"a": lambda b: text_reply("home")})
    reply, sid = pipeline.open_app("a", None)
    assert reply.data == {"content": "home"}
    assert apps.calls["a"][0]["instruction"] == ""
    assert "action_request" not in apps.calls["a"][0]


def test_a_failing_router_still_answers(tmp_path: Path) -> None:
    pipeline, _, _, _, _ = make_pipeline(tmp_path, {"a": lambda b: text_reply("x")})

    class Broken:
        def route(self, text: str, apps: Any) -> Any:
            raise RuntimeError("boom")

    pipeline._router = Broken()
    response = pipeline.instruction(InstructionRequest(text="hi"))
    assert response.tasks == [] and "RuntimeError" in response.message
    assert "does a" in response.message


# ---------------------------------------------------- the user's language ------------

EN = "en-US"


def test_unavailable_app_in_english_keeps_the_technical_text_in_detail(
    tmp_path: Path,
) -> None:
    pipeline, apps, _, _, _ = make_pipeline(
        tmp_path, {"a": lambda b: text_reply("x")}, [PlannedTask("t1", "a", "go")]
    )
    apps.unavailable.add("a")
    zh = pipeline.instruction(InstructionRequest(text="go")).tasks[0].result
    assert (zh.message, zh.detail) == (
        "「A」现在不可用，请稍后再试。",
        "app a is restarting",
    )
    task = pipeline.instruction(InstructionRequest(text="go", language=EN)).tasks[0]
    assert task.result.data["code"] == "app_unavailable"
    assert task.result.message == (
        '"A" is not available right now. Please try again in a moment.'
    )
    assert task.result.data["message"] == task.result.message
    assert task.result.detail == "app a is restarting"
    reply, _ = pipeline.open_app("a", None, EN)
    assert reply.message.startswith('"A" is not available') and reply.detail


def test_failing_apps_in_english_say_so_plainly(tmp_path: Path) -> None:
    def unreachable(body: dict[str, Any]) -> dict[str, Any]:
        raise AppUnreachable("app b is not reachable (connection refused)")

    def hung(body: dict[str, Any]) -> dict[str, Any]:
        raise PeerTimeout("app d did not answer within 60 s")

    def broken(body: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("boom")

    apps = {
        "b": unreachable,
        "c": lambda b: {"status": "ok", "data": "not an object"},
        "d": hung,
        "e": broken,
    }
    plan = [PlannedTask(f"t{n}", app, "x") for n, app in enumerate(apps, start=1)]
    pipeline, _, _, _, _ = make_pipeline(tmp_path, apps, plan)
    tasks = pipeline.instruction(InstructionRequest(text="x", language=EN)).tasks
    said = {t.app_id: (t.result.data["code"], t.result.message) for t in tasks}
    assert said == {
        "b": ("app_unreachable", '"B" could not be reached.'),
        "c": ("bad_app_reply", '"C" answered in a way the system cannot read.'),
        "d": ("app_unreachable", '"D" did not answer in time.'),
        "e": (
            "internal_error",
            'Something went wrong inside the system while running "E".',
        ),
    }
    detail = {t.app_id: t.result.detail for t in tasks}
    assert detail["b"] == "app b is not reachable (connection refused)"
    assert "view_type" in detail["c"] and "应用" not in detail["c"]
    assert detail["d"] == "app d did not answer within 60 s"
    assert detail["e"] == "RuntimeError: boom"
    zh = pipeline.instruction(InstructionRequest(text="x", language="zh-CN")).tasks
    assert zh[1].result.message == "「C」的回复无法读取。"
    assert zh[1].result.detail.startswith("invalid AppReply: view_type")
    assert zh[3].result.message == "运行「E」时系统内部出错。"
    assert zh[3].result.detail == "RuntimeError: boom"


def test_a_cancelled_task_in_english() -> None:
    reply = failure_view(Cancelled("the work was cancelled"), "A", EN)
    assert (reply.data["code"], reply.message, reply.detail) == (
        "cancelled",
        "Cancelled.",
        None,
    )
    assert (
        failure_view(Cancelled("the work was cancelled"), "A", "zh-CN").message
        == "已取消。"
    )


def test_rounds_cap_and_failed_dependency_in_english(tmp_path: Path) -> None:
    forever = always_planning()
    pipeline, _, _, _, _ = make_pipeline(
        tmp_path,
        {"a": forever, "b": lambda b: text_reply("never")},
        [PlannedTask("t1", "a", "go"), PlannedTask("t2", "b", "then", ["t1"])],
        max_rounds=2,
    )
    first, second = pipeline.instruction(InstructionRequest(text="go", language=EN)).tasks
    assert first.result.message == '"A" gave no result after 2 rounds of tool calls.'
    assert (second.status, second.result) == ("skipped", None)
    response = pipeline.instruction(InstructionRequest(text="go", language="zh-CN"))
    assert response.tasks[0].result.message == "应用 A 在 2 轮工具调用后仍未给出结果"
    # the one failure is what the user reads, not a second one for the skipped task
    assert response.message == "应用 A 在 2 轮工具调用后仍未给出结果"


def test_messages_of_several_tasks_are_joined_for_the_language(tmp_path: Path) -> None:
    pipeline, _, _, _, _ = make_pipeline(
        tmp_path,
        {
            "a": lambda b: text_reply("1", message="Played"),
            "b": lambda b: text_reply("2", message="Opened"),
        },
        [PlannedTask("t1", "a", "x"), PlannedTask("t2", "b", "y")],
    )
    english = pipeline.instruction(InstructionRequest(text="x", language=EN))
    assert english.message == "Played; Opened"
    later = pipeline.instruction(
        InstructionRequest(text="x", session_id=english.session_id)
    )
    assert later.message == "Played; Opened"  # the session keeps its language
    assert pipeline.instruction(InstructionRequest(text="x")).message == "Played；Opened"


def test_no_match_and_a_failing_router_in_english(tmp_path: Path) -> None:
    pipeline, _, _, _, _ = make_pipeline(tmp_path, {"a": lambda b: text_reply("x")}, [])
    response = pipeline.instruction(InstructionRequest(text="???", language=EN))
    assert (
        response.message == "No app can do that. The start menu shows what each app can do."
    )
    pipeline._contexts.default_language = lambda: EN  # the settings' ui_language
    assert pipeline.instruction(InstructionRequest(text="???")).message.startswith("No ")

    class Broken:
        def route(self, text: str, apps: Any) -> Any:
            raise RuntimeError("boom")

    pipeline._router = Broken()
    message = pipeline.instruction(InstructionRequest(text="hi", language=EN)).message
    assert message.startswith(
        "Routing this instruction failed (RuntimeError). The installed apps can:"
    )
    assert "RuntimeError" in message and "does a" in message and "路由" not in message


def test_a_part_no_app_claims_is_said_not_dropped(tmp_path: Path) -> None:
    """Without a catch-all app, "播放七里香，然后告诉我今天天气" plays the song and says
    that no app can do the rest."""
    pipeline, _, _, _, _ = make_pipeline(
        tmp_path,
        {"a": lambda b: text_reply("1", message="正在播放七里香")},
        [PlannedTask("t1", "a", "播放七里香")],
    )

    class Partly:
        def route(self, text: str, apps: Any) -> RoutePlan:
            task = PlannedTask("t1", "a", "播放七里香")
            return RoutePlan([task], 0.4, unclaimed=["告诉我今天天气"])

    pipeline._router = Partly()
    chinese = pipeline.instruction(InstructionRequest(text="x")).message
    assert chinese == "正在播放七里香；没有应用能做：告诉我今天天气"
    english = pipeline.instruction(InstructionRequest(text="x", language=EN)).message
    assert english.endswith("; No installed app can do: 告诉我今天天气")


def test_a_risky_step_is_asked_in_the_sessions_language(tmp_path: Path) -> None:
    pipeline, apps, executor, _, _ = asking_pipeline(tmp_path)
    task = pipeline.instruction(InstructionRequest(text="drop t", language=EN)).tasks[0]
    assert task.result.view_type == "confirm" and executor.runs == []
    assert task.result.message == (
        'Please confirm: The app "DB" wants to change the database d.db: DROP TABLE t'
    )
    reply, _, _ = pipeline.resume(task.result.data["confirmation_id"], "deny")
    assert reply.message == "Not dropped"
    results = apps.calls["db"][1]["context"]["tool_results"]
    assert results["step_1"]["error"].startswith("The user refused this step: change")


def test_a_lost_executor_is_named_not_the_app(tmp_path: Path) -> None:
    plan_once = iter([{**text_reply("wait"), "view_type": "loading", "steps": [STEP]}])
    pipeline, _, executor, _, _ = make_pipeline(
        tmp_path,
        {"a": lambda b: next(plan_once, text_reply("done"))},
        [PlannedTask("t1", "a", "go")],
    )

    def lost(body: dict[str, Any], timeout: float) -> dict[str, Any]:
        raise ExecutorUnreachable("the executor is not reachable (RemoteDisconnected)")

    pipeline._run_steps = lost
    reply = pipeline.instruction(InstructionRequest(text="go")).tasks[0].result
    assert reply.data["code"] == "executor_unreachable"
    assert "执行器" in reply.message and "「A」" not in reply.message
    assert reply.detail == "the executor is not reachable (RemoteDisconnected)"
    english = failure_view(ExecutorUnreachable("the executor is not reachable"), "A", EN)
    assert english.message.startswith("The service that runs tools (the executor)")
    # the app's own silence names the app, whatever its message says
    app_lost = failure_view(AppUnreachable("the executor is not reachable"), "A", EN)
    assert '"A"' in app_lost.message and "executor" not in app_lost.message


def test_the_executor_client_names_the_executor_when_nothing_answers() -> None:
    nobody = free_port()  # a port nobody listens on
    client = ExecutorClient(f"http://127.0.0.1:{nobody}", "token", timeout=2)
    with pytest.raises(ExecutorUnreachable, match="the executor is not reachable"):
        client.run({"app_id": "a", "steps": []}, timeout=2)
