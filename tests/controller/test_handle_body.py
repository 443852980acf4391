"""The body the pipeline POSTs to an app (S-55) is `HandleRequest`'s dump, key
order included: for an instruction, an open (""), an action (instruction null)
and the call after steps ran (with `tool_results`, and `upstream` for a
dependent task)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aios_protocol.messages import ActionPost, HandleRequest, InstructionRequest, parse
from controller.routing.router import PlannedTask
from tests.controller.fakes import STEP, make_pipeline, text_reply


def _as_model_dumps(body: dict[str, Any]) -> dict[str, Any]:
    """What `HandleRequest(...).dump()` gives for the same request, plus the
    S-55 `instruction` set explicitly (null with an action)."""
    dumped = parse(HandleRequest, body).model_dump(mode="json", exclude_none=True)
    dumped["instruction"] = body["instruction"]
    return dumped


def _same(body: dict[str, Any]) -> None:
    expected = _as_model_dumps(body)
    # json text, so the key order is compared too
    assert json.dumps(body, ensure_ascii=False) == json.dumps(expected, ensure_ascii=False)


def test_every_body_is_the_handle_requests_dump(tmp_path: Path) -> None:
    def planner(body: dict[str, Any]) -> dict[str, Any]:
        if body["context"].get("tool_results"):
            return text_reply("done", state={"last": "x", "gone": None})
        return {"status": "ok", "view_type": "loading", "data": {}, "steps": [STEP]}

    tasks = [
        PlannedTask("t1", "planner", "first"),
        PlannedTask("t2", "echo", "second", depends_on=["t1"]),
    ]
    pipeline, apps, _, _, _ = make_pipeline(
        tmp_path, {"planner": planner, "echo": lambda body: text_reply("ok")}, tasks
    )
    response = pipeline.instruction(InstructionRequest(text="first then second"))
    session_id = response.session_id
    pipeline.open_app("echo", session_id)
    pipeline.action(
        "planner",
        ActionPost(action_id="play", type="button", params={"n": 1}, session_id=session_id),
    )

    planner_calls, echo_calls = apps.calls["planner"], apps.calls["echo"]
    assert [call["instruction"] for call in planner_calls] == ["first", "first", None, None]
    assert planner_calls[1]["context"]["tool_results"]["step_1"]["status"] == "ok"
    assert planner_calls[2]["action_request"]["action_id"] == "play"
    assert list(planner_calls[2])[-1] == "instruction"  # null, after the action
    assert [call["instruction"] for call in echo_calls] == ["second", ""]
    assert echo_calls[0]["context"]["upstream"][0]["task_id"] == "t1"
    for body in [*planner_calls, *echo_calls]:
        _same(body)
