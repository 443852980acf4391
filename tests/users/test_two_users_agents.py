"""Two users of one running system through `/v1`, each with a key bound to them, and
the agent apps (the scripted model server in place of a model): the assistant writes
a note for each, and each lists and reads only their own; a skill one user installs
through the skills app is neither found nor run by the other; each user's own model
settings (`/v1/sandbox/settings`) reach the model for their requests only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
import requests

from tests.assistant.conftest import ASSISTANT, agent_requests, assistant_config
from tests.controller.system import (
    RunningSystem,
    build_apps_dir,
    copy_shipped_apps,
    serving,
)
from tests.fakes.openai_server import FakeOpenAI, text_reply, tool_calls_reply
from tests.skills.conftest import PY_SKILL, write_skill

pytestmark = pytest.mark.slow

ALICE_KEY = "sk-alice-key-0123456789abcdef"
BOB_KEY = "sk-bob-key-0123456789abcdef"
SKILLS = "skills_app"


@pytest.fixture(scope="module")
def system(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI
) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("two_users_agents")
    apps = copy_shipped_apps(
        build_apps_dir(root / "apps", test_apps=()), (ASSISTANT, SKILLS)
    )
    config = {
        **assistant_config(fake),
        "api_keys": [
            {"key": ALICE_KEY, "user": "alice"},
            {"key": BOB_KEY, "user": "bob"},
        ],
    }
    with serving(root, apps, (ASSISTANT, SKILLS), config=config) as running:
        yield running


@pytest.fixture(autouse=True)
def _clean(fake: FakeOpenAI) -> None:
    fake.reset()


def _ask(system: RunningSystem, key: str, text: str, *, app: str = ASSISTANT) -> Any:
    client = openai.OpenAI(base_url=f"{system.url}/v1", api_key=key, max_retries=0)
    reply = client.chat.completions.create(
        model=f"triton/{app}",
        messages=[{"role": "user", "content": text}],
        extra_headers={"X-AIOS-Conversation-Id": f"c-{abs(hash((key, text)))}"},
    )
    return reply.choices[0].message


def _tool_results(fake: FakeOpenAI) -> list[str]:
    """What the tools answered, as the model read it in the last agent request."""
    last = agent_requests(fake)[-1]
    return [str(m["content"]) for m in last.messages if m["role"] == "tool"]


def test_each_user_writes_lists_and_reads_only_their_own_notes(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    for key, note in ((ALICE_KEY, "alice: buy milk"), (BOB_KEY, "bob: call mum")):
        fake.script(
            tool_calls_reply(("file_write", {"path": "notes/today.md", "content": note})),
            text_reply("记下了。"),
        )
        answer = _ask(system, key, "记一条笔记")
        assert answer.content == "记下了。", answer
        assert "error" not in _tool_results(fake)[0], _tool_results(fake)
    for user, note in (("alice", "alice: buy milk"), ("bob", "bob: call mum")):
        kept = system.state_dir / "users" / user / "workspaces" / ASSISTANT / "notes"
        assert (kept / "today.md").read_text() == note
    assert not (system.workspace(ASSISTANT) / "notes").exists()  # not the owner's
    for key, mine, theirs in ((ALICE_KEY, "alice", "bob"), (BOB_KEY, "bob", "alice")):
        fake.script(
            tool_calls_reply(
                ("file_list", {"path": "notes"}),
                ("file_read", {"path": "notes/today.md"}),
            ),
            text_reply("这是你的笔记。"),
        )
        assert _ask(system, key, "列出并读我的笔记").content == "这是你的笔记。"
        listed, read = _tool_results(fake)
        assert "today.md" in listed, listed
        assert mine in read and theirs not in read, read
    # where a /v1 answer's media link points for a user: their own file, with their key
    files = f"{system.url}/v1/sandbox/files/{ASSISTANT}"
    for key, note in ((ALICE_KEY, "alice: buy milk"), (BOB_KEY, "bob: call mum")):
        got = requests.get(
            f"{files}/notes/today.md",
            headers={"Authorization": f"Bearer {key}"},
            timeout=30,
        )
        assert got.status_code == 200 and got.text == note, got.text
    bobs = "%2E%2E/%2E%2E/%2E%2E/bob/workspaces/assistant_app/notes/today.md"
    for path, status in (("notes/none.md", 404), (bobs, 403)):
        got = requests.get(
            f"{files}/{path}", headers={"Authorization": f"Bearer {ALICE_KEY}"}, timeout=30
        )
        assert got.status_code == status, (path, got.text)
        assert "call mum" not in got.text
    assert requests.get(f"{files}/notes/today.md", timeout=30).status_code == 401


def _confirmations(system: RunningSystem, key: str) -> list[dict[str, Any]]:
    answer = requests.get(
        f"{system.url}/v1/sandbox/confirmations",
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    return list(answer.json()["confirmations"])


def _search_and_run(system: RunningSystem, fake: FakeOpenAI, key: str) -> list[Any]:
    fake.script(
        tool_calls_reply(
            ("search_skills", {"keyword": "alice_tool"}),
            ("run_command", {"command": "alice_tool -n 7"}),
        ),
        text_reply("查完了。"),
    )
    assert _ask(system, key, "找 alice_tool 技能并运行").content == "查完了。"
    return [json.loads(r) for r in _tool_results(fake)]


def test_a_skill_one_user_installs_is_neither_found_nor_run_by_the_other(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    alice_work = system.state_dir / "users" / "alice" / "workspaces" / SKILLS
    write_skill(
        alice_work,
        "alice_tool.py",
        PY_SKILL.format(name="alice_tool", summary="Alice's own tool"),
        executable=False,
    )
    asked = _ask(system, ALICE_KEY, "安装技能 alice_tool.py", app=SKILLS)
    assert "install_skill" in json.dumps(asked.model_dump(), ensure_ascii=False), asked
    (question,) = _confirmations(system, ALICE_KEY)
    assert _confirmations(system, BOB_KEY) == []
    answered = requests.post(
        f"{system.url}/v1/sandbox/confirmations/{question['confirmation_id']}",
        json={"decision": "allow_once"},
        headers={"Authorization": f"Bearer {ALICE_KEY}"},
        timeout=60,
    )
    assert answered.status_code == 200, answered.text
    assert "alice_tool" in answered.json()["message"], answered.json()
    users = system.state_dir / "users"
    assert (users / "alice" / "skills" / "alice_tool").exists()
    assert not (users / "default" / "skills" / "alice_tool").exists()
    found, ran = _search_and_run(system, fake, ALICE_KEY)
    assert "alice_tool" in json.dumps(found), found
    assert "got 7" in json.dumps(ran), ran
    found, ran = _search_and_run(system, fake, BOB_KEY)
    assert found["skills"] == [], found
    assert ran["code"] == "skill_not_found", ran
    assert not (users / "bob" / "skills" / "alice_tool").exists()


def test_a_forked_skills_risky_call_waits_for_its_users_yes_in_their_sandbox(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    """Through /v1: the sub-agent of Alice's skill marked fork overwrites a file of
    hers only after her yes (asked of her, not of Bob), in her sandbox."""
    users = system.state_dir / "users"
    work = users / "alice" / "workspaces" / ASSISTANT
    skill = work / "skills" / "rewrite_draft"
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text(
        "---\nname: rewrite_draft\ndescription: Rewrite the draft\ncontext: fork\n"
        "allowed-tools: [file_write]\n---\nRewrite draft.txt.\n"
    )
    (work / "draft.txt").write_text("alice's first draft")
    fake.when(
        "<fork-boilerplate>",
        tool_calls_reply(("file_write", {"path": "draft.txt", "content": "rewritten"})),
        text_reply("rewrote draft.txt"),
    )
    fake.script(
        tool_calls_reply(("skill", {"name": "rewrite_draft"})),
        text_reply("草稿改好了。"),
    )
    client = openai.OpenAI(base_url=f"{system.url}/v1", api_key=ALICE_KEY, max_retries=0)
    asked = client.chat.completions.create(
        model=f"triton/{ASSISTANT}",
        messages=[{"role": "user", "content": "用技能改写草稿"}],
        extra_headers={"X-AIOS-Conversation-Id": "c-forked-skill"},
    )
    triton = (asked.choices[0].message.model_extra or {})["triton"]
    assert triton["awaiting_confirmation"], asked  # she is asked, not refused
    (question,) = _confirmations(system, ALICE_KEY)
    assert question["confirmation_id"] == triton["awaiting_confirmation"]
    assert "draft.txt" in question["summary"], question
    assert _confirmations(system, BOB_KEY) == []
    assert (work / "draft.txt").read_text() == "alice's first draft"
    answered = requests.post(
        f"{system.url}/v1/sandbox/confirmations/{question['confirmation_id']}",
        json={"decision": "allow_once"},
        headers={"Authorization": f"Bearer {ALICE_KEY}"},
        timeout=60,
    )
    assert answered.status_code == 200, answered.text
    assert "草稿改好了。" in json.dumps(answered.json(), ensure_ascii=False)
    assert (work / "draft.txt").read_text() == "rewritten"
    assert not (users / "bob" / "workspaces" / ASSISTANT / "draft.txt").exists()
    assert not (system.workspace(ASSISTANT) / "draft.txt").exists()
    summary = json.loads(_tool_results(fake)[-1])
    assert summary["status"] == "ok" and summary["summary"] == "rewrote draft.txt"


def _settings(
    system: RunningSystem, key: str, body: dict[str, Any] | None = None
) -> requests.Response:
    return requests.request(
        "PUT" if body is not None else "GET",
        f"{system.url}/v1/sandbox/settings",
        json=body,
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )


def _model_key(fake: FakeOpenAI) -> tuple[str, str]:
    """The key and model the last agent request reached the model with."""
    last = agent_requests(fake)[-1]
    headers = {k.lower(): v for k, v in last.headers.items()}
    return headers["authorization"], str(last.body.get("model"))


def test_a_users_own_model_key_serves_their_requests_and_only_theirs(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    own = {"llm": {"api_key": "sk-alice-own-model-0001", "model": "alice-model"}}
    saved = _settings(system, ALICE_KEY, own)
    assert saved.status_code == 200, saved.text
    assert saved.json() == {
        "llm": {"api_key": "••••0001", "model": "alice-model"},
        "key": "own",
    }
    assert _settings(system, ALICE_KEY).json() == saved.json()
    assert _settings(system, BOB_KEY).json() == {"llm": {}, "key": "owner"}
    path = system.state_dir / "users" / "alice" / "settings.json"
    assert json.loads(path.read_text())["llm"]["api_key"] == "sk-alice-own-model-0001"
    for bad in ({"llm": {"base_url": "not a url"}}, {"voice_api_key": "x"}, [1]):
        refused = _settings(system, ALICE_KEY, bad)  # type: ignore[arg-type]
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["code"] == "invalid_request"
    assert _settings(system, ALICE_KEY).json() == saved.json()  # nothing lost
    echoed = _settings(system, ALICE_KEY, {"llm": saved.json()["llm"]})
    assert echoed.json() == saved.json()
    assert _settings(system, system.token, own).status_code == 400  # the desktop's

    for key, expected in (
        (ALICE_KEY, ("Bearer sk-alice-own-model-0001", "alice-model")),
        (BOB_KEY, ("Bearer sk-assistant-test", "deepseek-chat")),
        (system.token, ("Bearer sk-assistant-test", "deepseek-chat")),
    ):
        fake.script(text_reply("好的。"))
        assert _ask(system, key, "你好").content == "好的。"
        assert _model_key(fake) == expected, key
    removed = _settings(system, ALICE_KEY, {"llm": {"api_key": "", "model": ""}})
    assert removed.json() == {"llm": {}, "key": "owner"}
    fake.script(text_reply("好的。"))
    _ask(system, ALICE_KEY, "你好")
    assert _model_key(fake)[0] == "Bearer sk-assistant-test"


def test_the_owners_key_never_goes_to_a_server_a_user_named(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    """A user who names a model server of their own and no key of their own: their
    requests, the assistant's and a bare `triton` one routed by the model, reach
    their server with no key at all, never with the owner's."""
    with FakeOpenAI() as theirs:
        chosen = {"llm": {"base_url": theirs.base_url}}
        saved = _settings(system, BOB_KEY, chosen)
        assert saved.status_code == 200, saved.text
        assert saved.json()["key"] == "none"
        try:
            for app in (ASSISTANT, ""):
                theirs.reset()
                theirs.routes["讲个笑话"] = ASSISTANT
                theirs.script(text_reply("好的。"), text_reply("好的。"))
                client = openai.OpenAI(
                    base_url=f"{system.url}/v1", api_key=BOB_KEY, max_retries=0
                )
                client.chat.completions.create(
                    model=f"triton/{app}" if app else "triton",
                    messages=[{"role": "user", "content": "讲个笑话"}],
                )
                assert theirs.requests, app  # their server was asked
                for seen in theirs.requests:
                    headers = {k.lower(): v for k, v in seen.headers.items()}
                    assert "sk-assistant-test" not in json.dumps(headers), app
        finally:
            _settings(system, BOB_KEY, {"llm": {"base_url": ""}})
        # the owner's own server still gets the owner's key for bob afterwards
        fake.script(text_reply("好的。"))
        _ask(system, BOB_KEY, "你好")
        assert _model_key(fake)[0] == "Bearer sk-assistant-test"
