"""A background sub-agent keeps its app in use, and its summary outlives the app's
process.

智能助手 starts on first use and is stopped after a short `apps.idle_stop_s`. While
its background sub-agent waits on the (scripted) model, the app is not stopped as
idle; once the sub-agent finished and the idle time passed it is. After the app was
started again, `task_output` reads the finished task's summary from `task-outputs/`
instead of answering `unknown_task`. The same holds for the assistant's process that
serves alice alone, with her workdir's `task-outputs/`."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import openai
import psutil
import pytest

from tests.assistant.conftest import ASSISTANT, agent_requests, ask, build_assistant_apps
from tests.assistant.conftest import assistant_config as base_config
from tests.controller.system import RunningSystem, launch
from tests.fakes.openai_server import (
    FakeOpenAI,
    holding,
    text_reply,
    tool_calls_reply,
)

pytestmark = pytest.mark.slow

IDLE_STOP_S = 1.5
FORK = "<fork-boilerplate>"
ALICE_KEY = "sk-alice-key-background-0123456789"


@pytest.fixture(scope="module")
def system(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI
) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("background")
    config = base_config(fake)
    config["apps"] = {"start_at_launch": False, "idle_stop_s": IDLE_STOP_S}
    config["permissions"] = {"confirm": False}
    config["api_keys"] = [{"key": ALICE_KEY, "user": "alice"}]
    running = launch(root, build_assistant_apps(root), config=config)
    try:
        yield running
    finally:
        running.stop()


def _last_result(request) -> dict:
    """The latest tool result a model request carries."""
    tool = [m for m in request.messages if m.get("role") == "tool"]
    return json.loads(tool[-1]["content"])


def _start_in_background(fake: FakeOpenAI, system: RunningSystem, text: str) -> dict:
    """Ask 智能助手 for a background sub-agent (scripted with `fake.when` before);
    the reply, with the task's id as `task_id`."""
    task = {"description": "list", "prompt": "列出文件", "background": True}
    fake.script(tool_calls_reply(("task", task)), text_reply("已在后台开始。"))
    reply = ask(system, fake, text)
    assert reply["data"]["content"] == "已在后台开始。", reply
    parent = [r for r in agent_requests(fake) if FORK not in r.prompt_text]
    started = _last_result(parent[-1])
    assert started["status"] == "running", started
    return {**reply, "task_id": started["task_id"]}


def test_a_running_background_sub_agent_keeps_its_app_in_use_until_it_ends(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    release = threading.Event()
    # the sub-agent's first turn waits on the model until the test lets it go on
    fake.when(
        FORK,
        holding(
            tool_calls_reply(("file_list", {}), ("file_list", {"path": "."})),
            release.is_set,
        ),
        text_reply("后台子任务：工作区里有 README.txt。"),
    )
    first = _start_in_background(fake, system, "智能助手 在后台慢慢列文件")
    app = system.apps()[ASSISTANT]
    assert app["status"] == "running", app
    system.wait_for(
        lambda: any(FORK in r.prompt_text for r in agent_requests(fake)),
        20,
        "the sub-agent's first model call",
    )
    # well past idle_stop_s without a call from the controller: the sub-agent's model
    # call keeps the app in use
    time.sleep(IDLE_STOP_S * 3)
    now = system.apps()[ASSISTANT]
    assert now["status"] == "running" and now["pid"] == app["pid"], now

    # it finishes; then the app is idle, and stopped
    release.set()
    kept = system.workspace(ASSISTANT) / "task-outputs" / f"{first['task_id']}.md"
    system.wait_for(kept.exists, 20, "the background task's output in task-outputs/")
    system.wait_app(ASSISTANT, "idle", timeout=20)


def test_task_output_reads_a_finished_task_from_task_outputs_after_a_restart(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.when(FORK, text_reply("后台子任务：工作区里有 README.txt。"))
    first = _start_in_background(fake, system, "智能助手 在后台列文件")
    task_id = first["task_id"]
    app = system.apps()[ASSISTANT]
    output = system.workspace(ASSISTANT) / "task-outputs" / f"{task_id}.md"
    system.wait_for(output.exists, 20, "the background task's output in task-outputs/")
    system.wait_app(ASSISTANT, "idle", timeout=20)

    # started again by the next request: task_output reads what was kept there
    fake.reset()
    fake.script(
        tool_calls_reply(("task_output", {"task_id": task_id})),
        tool_calls_reply(("task_output", {"task_id": "../README"})),
        text_reply("子任务说工作区里有 README.txt。"),
    )
    again = ask(system, fake, "智能助手 后台任务怎么样了", session=first["session_id"])
    assert again["data"]["content"] == "子任务说工作区里有 README.txt。", again
    restarted = system.apps()[ASSISTANT]
    assert restarted["status"] == "running" and restarted["pid"] != app["pid"], restarted
    requests = [r for r in agent_requests(fake) if FORK not in r.prompt_text]
    summary = _last_result(requests[1])
    assert summary.get("status") == "ok" and summary["task_id"] == task_id, summary
    assert summary["summary"] == "后台子任务：工作区里有 README.txt。", summary
    assert summary["output"] == f"task-outputs/{task_id}.md", summary
    # an id that is no task's is not looked for outside task-outputs/
    unknown = _last_result(requests[2])
    assert unknown["code"] == "unknown_task", unknown


def _ask_as_alice(system: RunningSystem, text: str) -> str:
    """`text` to the assistant through `/v1` with alice's key, in one conversation."""
    client = openai.OpenAI(base_url=f"{system.url}/v1", api_key=ALICE_KEY, max_retries=0)
    reply = client.chat.completions.create(
        model=f"triton/{ASSISTANT}",
        messages=[{"role": "user", "content": text}],
        extra_headers={"X-AIOS-Conversation-Id": "c-alice-background"},
    )
    return str(reply.choices[0].message.content)


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.add(pid)
        except psutil.Error:
            pass
    return alive


def test_a_users_process_is_kept_while_its_sub_agent_runs_and_reads_it_after(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    release = threading.Event()
    fake.when(
        FORK,
        holding(
            tool_calls_reply(("file_list", {}), ("file_list", {"path": "."})),
            release.is_set,
        ),
        text_reply("爱丽丝的后台子任务：完成。"),
    )
    task = {"description": "list", "prompt": "列出文件", "background": True}
    fake.script(tool_calls_reply(("task", task)), text_reply("已在后台开始。"))
    before = {p.pid for p in system.children()}
    assert _ask_as_alice(system, "在后台列文件") == "已在后台开始。"
    # what alice's first call started: the assistant's process serving her alone
    alices = _alive({p.pid for p in system.children()} - before)
    assert alices, "no process was started for alice"
    parent = [r for r in agent_requests(fake) if FORK not in r.prompt_text]
    task_id = _last_result(parent[-1])["task_id"]
    system.wait_for(
        lambda: any(FORK in r.prompt_text for r in agent_requests(fake)),
        20,
        "the sub-agent's first model call",
    )
    time.sleep(IDLE_STOP_S * 3)
    assert _alive(alices) == alices  # its sub-agent's model call keeps it
    release.set()
    system.wait_for(lambda: not _alive(alices), 20, "alice's process stopped as idle")
    kept = system.state_dir / "users" / "alice" / "workspaces" / ASSISTANT
    assert (kept / "task-outputs" / f"{task_id}.json").exists()
    assert not (system.workspace(ASSISTANT) / "task-outputs" / f"{task_id}.json").exists()

    fake.reset()
    fake.script(
        tool_calls_reply(("task_output", {"task_id": task_id})),
        text_reply("读到了。"),
    )
    assert _ask_as_alice(system, "后台任务怎么样了") == "读到了。"
    summary = _last_result(agent_requests(fake)[-1])
    assert summary.get("status") == "ok", summary
    assert summary["summary"] == "爱丽丝的后台子任务：完成。", summary
