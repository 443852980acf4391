"""Compaction keeps the model context inside its window and never separates a tool
call from its result; the display history is never touched. Also: the assistant
without a model says so and names the apps that work offline."""

from __future__ import annotations

import json

from aios_sdk.runtime.compaction import (
    Compactor,
    calibrated,
    estimate_tokens,
    exchanges,
    hard_truncate,
    light_cleanup,
    targeted_trim,
)
from aios_sdk.runtime.messages import Conversation, ToolMessage
from apps.assistant_app.flows import AssistantFlows


def long_conversation(
    rounds: int, size: int = 3000, *, same_ids: bool = False
) -> Conversation:
    """`rounds` exchanges of a call and its result; with `same_ids` every call is
    `c0` (a model that numbers its calls afresh each turn)."""
    conversation = Conversation()
    conversation.ensure_system("system prompt")
    for n in range(rounds):
        conversation.add_user(f"question {n}")
        call = {
            "id": "c0" if same_ids else f"c{n}",
            "name": "file_write",
            "arguments": json.dumps({"path": f"f{n}.txt", "content": "x" * size}),
        }
        asker = conversation.add_assistant("", [call]).id
        conversation.add_tool_result(
            call["id"], "file_write", "r" * size, ok=True, asked_by=asker
        )
        conversation.add_assistant(f"answer {n}", [])
    return conversation


def calls_answered(messages: list[dict]) -> bool:
    """Every tool message follows the assistant message that called it."""
    open_ids: set[str] = set()
    for message in messages:
        if message["role"] == "assistant":
            open_ids = {c["id"] for c in message.get("tool_calls") or []}
        elif message["role"] == "tool" and message["tool_call_id"] not in open_ids:
            return False
    return True


def test_light_cleanup_shortens_old_results_and_inputs_only() -> None:
    conversation = long_conversation(6)
    messages = conversation.model_messages
    assert light_cleanup(messages, keep_recent=2) > 0
    tools = [m for m in messages if m["role"] == "tool"]
    assert all(len(m["content"]) < 600 for m in tools[:-2])
    assert all(len(m["content"]) == 3000 for m in tools[-2:])
    old_call = messages[2]["tool_calls"][0]["function"]["arguments"]
    assert len(old_call) < 1000 and json.loads(old_call)["path"] == "f0.txt"
    assert all(
        len(m.result.content) == 3000
        for m in conversation.messages
        if isinstance(m, ToolMessage)
    )


def test_summary_at_three_quarters_of_the_window() -> None:
    conversation = long_conversation(8)
    asked: list[list[dict]] = []

    def summarize(older: list[dict]) -> str:
        asked.append(older)
        return "the user asked eight questions; files f0..f7 were written"

    compactor = Compactor(window=3000, summarize=summarize)
    fitted, done = compactor.fit(conversation.model_messages, [], 1.0)
    assert "summary" in done and asked
    assert fitted[0]["role"] == "system"
    assert "[Summary of the earlier conversation]" in fitted[1]["content"]
    assert fitted[-1]["content"] == "answer 7" or calls_answered(fitted)
    assert estimate_tokens(fitted) <= 3000
    assert len(conversation.messages) == 8 * 4  # the display history stays whole


def test_trim_without_a_summary_keeps_calls_with_their_results() -> None:
    conversation = long_conversation(10)
    compactor = Compactor(window=2500, summarize=None)
    fitted, done = compactor.fit(conversation.model_messages, [], 1.0)
    assert "trim" in done
    assert calls_answered(fitted)
    assert fitted[0]["role"] == "system" and fitted[0]["content"] == "system prompt"
    assert any(m.get("content") == "question 9" for m in fitted)
    assert estimate_tokens(fitted) <= 2500


def test_failing_summary_falls_back_to_trim() -> None:
    def broken(older: list[dict]) -> str:
        raise RuntimeError("model down")

    conversation = long_conversation(10)
    fitted, done = Compactor(window=2500, summarize=broken).fit(
        conversation.model_messages, [], 1.0
    )
    assert "summary" not in done and "trim" in done and calls_answered(fitted)


def asked_by_the_message_before(messages: list[dict]) -> bool:
    """Every tool message names the assistant message right before its results."""
    asker = ""
    for message in messages:
        if message["role"] == "assistant":
            asker = message["id"]
        elif message["role"] == "tool" and message["asked_by"] != asker:
            return False
    return True


def test_compaction_keeps_the_ids_and_its_summary_reply_has_one() -> None:
    conversation = long_conversation(10, same_ids=True)
    before = {m["id"] for m in conversation.model_messages if m["role"] == "assistant"}
    assert len(before) == 20  # one call id, twenty messages
    summarized = Compactor(window=3000, summarize=lambda older: "files f0..f9")
    trimmed = Compactor(window=2500, summarize=None)
    for compactor, step in ((summarized, "summary"), (trimmed, "trim")):
        fitted, done = compactor.fit(list(conversation.model_messages), [], 1.0)
        assert step in done and asked_by_the_message_before(fitted)
        kept = [m["id"] for m in fitted if m["role"] == "assistant"]
        assert all(i.startswith("msg_") for i in kept) and len(set(kept)) == len(kept)
        new = [m for m in fitted if m["role"] == "assistant" and m["id"] not in before]
        if step == "summary":  # its reply to the summary is a message of its own
            assert [m["content"] for m in new] == [
                "Understood; I will continue from there."
            ]
        else:
            assert new == []
    cut = hard_truncate(conversation.model_messages, 2000)
    assert [m.get("id") for m in cut] == [m.get("id") for m in conversation.model_messages]
    assert asked_by_the_message_before(cut)


def test_exchanges_group_a_call_with_its_results() -> None:
    messages = long_conversation(2).model_messages
    assert exchanges(messages) == [[0], [1], [2, 3], [4], [5], [6, 7], [8]]
    kept = targeted_trim(messages, 1)
    assert calls_answered(kept) and kept[-1]["content"] == "answer 1"


def test_hard_truncation_is_the_last_resort() -> None:
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "y" * 40_000},
    ]
    cut = hard_truncate(messages, 2000)
    assert estimate_tokens(cut) <= 2000 and cut[1]["content"].startswith("yyy")
    assert len(messages[1]["content"]) == 40_000


def test_calibration_subtracts_the_system_and_tool_overhead() -> None:
    system = {"role": "system", "content": "rules " * 2000}
    tools = [{"type": "function", "function": {"name": "t", "description": "d" * 4000}}]
    body = [{"role": "user", "content": "hello " * 200}]
    overhead = estimate_tokens([system], tools)
    ours = estimate_tokens(body)
    factor = calibrated(1.0, overhead + 2 * ours, [system, *body], tools)
    assert 1.9 < factor < 2.1  # the conversation counts double; the overhead does not


def test_a_context_refused_as_too_long_is_compacted_to_half() -> None:
    conversation = long_conversation(8)
    messages = conversation.model_messages
    before = estimate_tokens(messages)
    compactor = Compactor(window=1_000_000, summarize=lambda older: "earlier: files")
    fitted, done = compactor.reactive(list(messages), [], 1.0)
    assert done == ["summary"] and estimate_tokens(fitted) <= before // 2
    assert calls_answered(fitted) and fitted[0]["role"] == "system"
    failing = Compactor(window=1_000_000, summarize=None)
    trimmed, steps = failing.reactive(list(messages), [], 1.0)
    assert steps == ["trim"] and estimate_tokens(trimmed) <= before // 2 + 110
    assert calls_answered(trimmed)
    huge = [{"role": "system", "content": "s"}, {"role": "user", "content": "y" * 40_000}]
    cut, steps = failing.reactive(huge, [], 1.0, attempt=2)
    assert steps == ["trim", "truncate"] and estimate_tokens(cut) < estimate_tokens(huge)


def test_estimate_is_corrected_from_usage() -> None:
    messages = [{"role": "user", "content": "hello " * 200}]
    ours = estimate_tokens(messages)
    factor = calibrated(1.0, ours * 2, messages, [])
    assert 1.9 < factor < 2.1
    assert estimate_tokens(messages, calibration=factor) > ours * 1.8


class _NoModel:
    available = False


class _Agent:
    llm = _NoModel()
    settings: dict = {}
    role_prompt = "r"


INSTALLED = [
    {"id": "assistant_app", "name": "智能助手", "system_role": "catch_all"},
    {"id": "music_app", "name": "音乐应用", "system_role": None},
    {"id": "skills_app", "name": "技能", "system_role": "skills"},
]


def test_without_a_model_it_says_so_and_names_the_installed_apps() -> None:
    context = {"cwd_state": {}, "installed_apps": INSTALLED}
    reply = AssistantFlows(_Agent()).handle("帮我整理文件", context)
    text = reply["data"]["content"]
    assert "需要一个模型" in text and "API 地址" in text and "本地模型地址" not in text
    assert text.endswith("不用模型也能用的应用：音乐应用、技能。")
    assert "代码应用" not in text  # not installed here, so not named
    assert "offline" not in text  # one language, the user's (see test_language.py)
    assert reply["notice"] == "error"  # nothing was done
