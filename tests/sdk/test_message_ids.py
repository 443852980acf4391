"""Message ids in the agent runtime, without processes: every assistant message has an
id, every tool result names the message that asked for it, a waiting call's result
replaces the placeholder of the message that asked — not the latest with that call id,
which a model numbering its calls afresh each turn (`c0` every time, as `said` does)
reuses — and the ids are kept through the session's journal, a restart and state
saved before there were ids. The model is never sent them. Two calls of one message
with one id (a model may do that too) each get their own result, in the order
proposed (the scripted model of `aios_sdk.testing` proposes them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aios_sdk import AIOSAgent
from aios_sdk.runtime.flows import AgentFlows
from aios_sdk.runtime.messages import (
    PLACEHOLDER,
    AssistantMessage,
    Conversation,
    ToolMessage,
)
from aios_sdk.testing import AppTestClient, ModelRequest, ScriptedModel, call, reply
from controller.sessions import SessionStore
from tests.sdk.test_runtime import Agent, Model, said

APP = "assistant_app"
WRITE = ("file_write", {"path": "a.txt", "content": "x"})


class Recording(Model):
    """The scripted model that also keeps the loop's progress events."""

    def __init__(self, *turns: Any) -> None:
        super().__init__(*turns)
        self.events: list[tuple[str, dict[str, Any]]] = []

    def progress(self, session_id: str, kind: str, data: dict[str, Any]) -> None:
        self.events.append((kind, data))


def askers(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(the tool result's `asked_by`, the id of the latest assistant message before it
    that proposed its call) for each tool result of `messages`."""
    pairs = []
    proposed: dict[str, str] = {}
    for message in messages:
        if message["role"] == "assistant":
            for call in message.get("tool_calls") or []:
                proposed[call["id"]] = message["id"]
        elif message["role"] == "tool":
            pairs.append((message["asked_by"], proposed[message["tool_call_id"]]))
    return pairs


def confirmed(state: dict[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
    """The tool results of `steps` after the user's yes, as the controller sends them."""
    return {
        "cwd_state": json.loads(json.dumps(state)),
        "tool_results": {
            f"step_{s['step_id']}": {"status": "ok", "result": {"size": 1}} for s in steps
        },
    }


def test_each_result_names_the_message_that_asked_and_the_model_never_sees_ids() -> None:
    model = Recording(
        said("", ("file_list", {})),
        said("", ("file_read", {"path": "a.txt"}), ("file_list", {"path": "b"})),
        said("ok"),
    )
    reply = AgentFlows(Agent(model)).handle("look", {"cwd_state": {}})
    assert reply["data"]["content"] == "ok"
    context = reply["state"]["model_messages"]
    ids = [m["id"] for m in context if m["role"] == "assistant"]
    assert len(ids) == len(set(ids)) == 3 and all(i.startswith("msg_") for i in ids)
    pairs = askers(context)
    assert len(pairs) == 3 and all(said == asker for said, asker in pairs)
    assert [said for said, _ in pairs] == [ids[0], ids[1], ids[1]]  # `c0` both times
    # the display history: the same ids, the same askers
    shown = Conversation.from_state(reply["state"]).messages
    answers = [m for m in shown if isinstance(m, AssistantMessage)]
    assert [m.id for m in answers] == ids
    results = [m.result.asked_by for m in shown if isinstance(m, ToolMessage)]
    assert results == [ids[0], ids[1], ids[1]]
    # what the model is sent has none of the runtime's keys
    for request in model.seen:
        assert all("id" not in m and "asked_by" not in m for m in request)
    # the loop's events say which message a call and a result belong to
    calls = [d["message_id"] for kind, d in model.events if kind == "tool_call"]
    answered = [d["asked_by"] for kind, d in model.events if kind == "tool_result"]
    assert calls == answered == [ids[0], ids[1], ids[1]]


def test_a_waiting_calls_result_replaces_its_own_placeholder_not_the_latest() -> None:
    """The call `c0` of one message waits for the user; a later message in the context
    proposed a `c0` too and has its result. The yes replaces the first message's
    placeholder and leaves the later result as it was."""
    model = Model(said("", WRITE), said("done"))
    agent = Agent(model)
    plan = AgentFlows(agent).handle("write", {"cwd_state": {}})
    state = json.loads(json.dumps(plan["state"]))
    listing = {"name": "file_list", "arguments": "{}"}
    later = {"id": "c0", "type": "function", "function": listing}
    state["model_messages"] += [
        {"role": "assistant", "id": "msg_later", "content": None, "tool_calls": [later]},
        {"role": "tool", "tool_call_id": "c0", "asked_by": "msg_later", "content": "[]"},
    ]
    reply = AgentFlows(agent).handle("write", confirmed(state, plan["steps"]))
    assert reply["data"]["content"] == "done"
    results = [m for m in model.seen[1] if m["role"] == "tool"]
    assert [json.loads(m["content"]) for m in results] == [{"size": 1}, []]
    assert PLACEHOLDER not in json.dumps(model.seen[1])


def test_a_placeholder_is_found_by_its_asker_and_call_id() -> None:
    conversation = Conversation()
    first = conversation.add_assistant("", [{"id": "c0", "name": "a", "arguments": ""}])
    conversation.add_placeholder("c0", asked_by=first.id)
    second = conversation.add_assistant("", [{"id": "c0", "name": "b", "arguments": ""}])
    conversation.add_placeholder("c0", asked_by=second.id)
    conversation.replace_placeholder("c0", "a", "first's", ok=True, asked_by=first.id)
    results = [m for m in conversation.model_messages if m["role"] == "tool"]
    assert [m["content"] for m in results] == ["first's", PLACEHOLDER]
    assert [m["asked_by"] for m in results] == [first.id, second.id]
    (shown,) = conversation.messages[2:]
    assert isinstance(shown, ToolMessage) and shown.result.asked_by == first.id


def test_the_ids_survive_the_session_journal_a_restart_and_the_yes(tmp_path: Path) -> None:
    model = Model(said("", ("file_list", {})), said("", WRITE), said("done"))
    agent = Agent(model)
    plan = AgentFlows(agent).handle("list, then write", {"cwd_state": {}})
    store = SessionStore(tmp_path)
    session = store.get_or_create(None)
    session.merge_agent_state(APP, {"turn_id": "t"})
    store.save(session)  # the snapshot; the conversation comes in a delta
    session.merge_agent_state(APP, json.loads(json.dumps(plan["state"])))
    store.save(session)
    restarted = SessionStore(tmp_path).get(session.session_id)
    assert restarted is not None
    kept = json.loads(json.dumps(restarted.agent_state(APP)))
    assert kept["model_messages"] == plan["state"]["model_messages"]
    first, waiting = [m["id"] for m in kept["model_messages"] if m["role"] == "assistant"]
    assert kept["pending"]["asked_by"] == waiting != first
    again = Conversation.from_state(kept).to_state()
    assert again["model_messages"] == kept["model_messages"]
    assert again["messages"] == kept["messages"]
    reply = AgentFlows(agent).handle("list, then write", confirmed(kept, plan["steps"]))
    assert reply["data"]["content"] == "done"
    context = reply["state"]["model_messages"]
    assert [m["id"] for m in context if m["role"] == "assistant"][:2] == [first, waiting]
    assert [asker for asker, _ in askers(context)] == [first, waiting]
    assert all(said == asker for said, asker in askers(context))


OLD_STATE: dict[str, Any] = {  # as it was saved before messages had ids
    "messages": [
        {"role": "user", "content": "go", "time": 1.0},
        {
            "role": "assistant",
            "content": "",
            "time": 2.0,
            "tool_calls": [{"id": "c0", "name": "file_list", "arguments": "{}"}],
        },
        {
            "role": "tool",
            "tool_call_id": "c0",
            "name": "file_list",
            "content": "[]",
            "is_error": False,
            "time": 3.0,
        },
        {
            "role": "assistant",
            "content": "",
            "time": 4.0,
            "tool_calls": [{"id": "c0", "name": "file_write", "arguments": "{}"}],
        },
    ],
    "model_messages": [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c0",
                    "type": "function",
                    "function": {"name": "file_list", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c0", "content": "[]"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c0",
                    "type": "function",
                    "function": {"name": "file_write", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c0", "content": PLACEHOLDER},
    ],
    "pending": {
        "turns": 2,
        "calls": [{"id": "c0", "name": "file_write", "args": {}}],
        "steps": [201],
    },
}


def test_state_saved_before_messages_had_ids_gets_them_the_same_on_every_load() -> None:
    state = Conversation.from_state(OLD_STATE).to_state()
    assert Conversation.from_state(json.loads(json.dumps(OLD_STATE))).to_state() == state
    assert "id" not in OLD_STATE["model_messages"][2]  # what was read is not changed
    context = state["model_messages"]
    listed, writing = [m["id"] for m in context if m["role"] == "assistant"]
    assert listed != writing and listed.startswith("msg_")
    assert [m["asked_by"] for m in context if m["role"] == "tool"] == [listed, writing]
    shown = state["messages"]
    assert shown[2]["asked_by"] == shown[1]["id"] != shown[3]["id"]
    assert state["pending"]["asked_by"] == writing  # the latest, as it was found before
    model = Model(said("written"))
    reply = AgentFlows(Agent(model)).handle("go", confirmed(state, [{"step_id": 201}]))
    assert reply["data"]["content"] == "written"
    results = [m["content"] for m in model.seen[0] if m["role"] == "tool"]
    assert results == ["[]", '{"size": 1}']


# ------------------------------------------- one call id twice in one message


class FilesAgent(AIOSAgent):
    name, description, icon = "文件助手", "reads files", "📁"
    role_prompt = "You answer from the workspace's files."
    agent = True


def file_list(path: str = ".") -> dict[str, Any]:
    """List a folder."""
    return {"listed": path}


def file_read(path: str) -> str:
    """Read a file."""
    return f"the text of {path}"


def file_write(path: str, content: str) -> dict[str, Any]:
    """Write a file."""
    return {"written": path}


FILE_TOOLS = {"file_list": file_list, "file_read": file_read, "file_write": file_write}


def results_of(request: ModelRequest) -> list[tuple[str, str]]:
    return [
        (m["tool_call_id"], m["content"]) for m in request.messages if m["role"] == "tool"
    ]


def test_two_calls_of_one_id_in_one_message_each_get_their_own_result_in_order() -> None:
    model = ScriptedModel(
        [
            reply(
                tool_calls=[
                    call("file_list", {"path": "docs"}, id="call_0"),
                    call("file_read", {"path": "a.txt"}, id="call_0"),
                ]
            ),
            reply(text="done"),
        ]
    )
    client = AppTestClient(FilesAgent, model=model, tools=FILE_TOOLS)
    assert client.say("look").data["content"] == "done"
    assert client.calls == [
        ("file_list", {"path": "docs"}),
        ("file_read", {"path": "a.txt"}),
    ]
    assert results_of(model.requests[1]) == [
        ("call_0", json.dumps({"listed": "docs"})),
        ("call_0", "the text of a.txt"),
    ]
    reported = [
        (d["name"], d["result"]) for kind, d in model.events if kind == "tool_result"
    ]
    assert reported == [
        ("file_list", json.dumps({"listed": "docs"})),
        ("file_read", "the text of a.txt"),
    ]


def test_a_direct_call_and_a_waiting_call_of_one_id_keep_their_own_results() -> None:
    """The listing runs at once, the write of the same id waits for the yes (and so
    does the same write proposed again): the write is not given the listing's result,
    and after the yes each call has its own, in the order proposed."""
    write = {"path": "a.txt", "content": "x"}
    model = ScriptedModel(
        [
            reply(
                tool_calls=[
                    call("file_list", {}, id="call_0"),
                    call("file_write", write, id="call_0"),
                    call("file_write", write, id="call_0"),
                ]
            ),
            reply(text="written"),
        ]
    )
    client = AppTestClient(FilesAgent, model=model, tools=FILE_TOOLS)
    assert client.say("write").data["content"] == "written"
    assert client.calls == [("file_list", {}), ("file_write", write)]
    listed, written = json.dumps({"listed": "."}), json.dumps({"written": "a.txt"})
    assert results_of(model.requests[1]) == [
        ("call_0", listed),
        ("call_0", written),
        ("call_0", written),  # the same write again: it ran once, both have its result
    ]
    shown = Conversation.from_state(client.state).messages
    results = [
        (m.result.name, m.result.content) for m in shown if isinstance(m, ToolMessage)
    ]
    assert results == [
        ("file_list", listed),
        ("file_write", written),
        ("file_write", written),
    ]


def test_early_results_are_not_taken_for_a_call_id_two_calls_share() -> None:
    """Early results come by call id: for an id two calls of the message share, no one
    can tell whose it is, so both calls run here."""
    twice = reply(
        tool_calls=[
            call("file_list", {"path": "docs"}, id="call_0"),
            call("file_read", {"path": "a.txt"}, id="call_0"),
        ]
    )
    early = {"call_0": {"status": "ok", "result": "the text of a.txt"}}
    model = ScriptedModel([twice.model_copy(update={"early_results": early}), reply("ok")])
    client = AppTestClient(FilesAgent, model=model, tools=FILE_TOOLS)
    assert client.say("look").data["content"] == "ok"
    assert [content for _, content in results_of(model.requests[1])] == [
        json.dumps({"listed": "docs"}),
        "the text of a.txt",
    ]


def test_a_new_message_instead_of_the_yes_ends_a_repeated_waiting_call_too() -> None:
    """The same write proposed twice waits once; the user moves on: both calls get
    the result saying they did not run, and no placeholder is left."""
    model = Model(said("", WRITE, WRITE), said("ok"))
    agent = Agent(model)
    plan = AgentFlows(agent).handle("write", {"cwd_state": {}})
    assert len(plan["steps"]) == 1
    reply = AgentFlows(agent).handle("never mind", {"cwd_state": plan["state"]})
    assert reply["data"]["content"] == "ok"
    results = [m for m in model.seen[1] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == ["c0", "c1"]
    assert [json.loads(m["content"])["code"] for m in results] == ["not_confirmed"] * 2
    assert PLACEHOLDER not in json.dumps(reply["state"]["model_messages"])
