"""Two users of one running system through `/v1` (real OpenAI client, the scripted
model servers in place of models), with an agent app whose own `@tool` methods read
through the executor.

An app's own tool runs for every user, in the app's process serving that user alone:
its workdir is that user's, what it asks the executor works in that user's sandbox,
and naming another user is refused with `user_not_allowed`. The controller's own
model call — routing a bare `triton` request — asks the model of the request's user
(their `/v1/sandbox/settings`), the owner's for everyone else; an app's model call
naming another user gets the model of the user its process serves.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
import requests

from tests.controller.system import (
    TEST_CONFIG,
    RunningSystem,
    build_apps_dir,
    copy_shipped_apps,
    serving,
)
from tests.fakes.music_api import make_wav
from tests.fakes.openai_server import FakeOpenAI, text_reply, tool_calls_reply

pytestmark = pytest.mark.slow

APP = "notes_probe"
MUSIC = "music_app"
ALICE_KEY = "sk-alice-key-0123456789abcdef"
BOB_KEY = "sk-bob-key-0123456789abcdef"
OWNER_MODEL = "sk-owner-model-test"
ALICE_MODEL = "sk-alice-own-model-0001"

MANIFEST = {
    "name": "笔记探针",
    "icon": "📝",
    "description": "reads the user's notes with its own tools",
    "entry": "main.py",
    "role_prompt": "You read the user's notes with the my_notes tool.",
    "agent": True,
}

MAIN = '''
from aios_sdk import AIOSAgent, ToolFailed, serve, tool
from aios_sdk.agent import CallScope, current_call, within_call

class NotesProbe(AIOSAgent):
    @tool(risk_level="read")
    def my_notes(self) -> dict:
        """The user's notes.md, as the executor reads it for this call."""
        return {
            "notes": self.call_tool("file_read", path="notes.md"),
            "user": current_call().user_id,
            "workdir": str(self.workdir),
        }

    @tool(risk_level="read")
    def notes_of(self, user: str) -> dict:
        """Read another user's notes.md by naming that user."""
        try:
            with within_call(CallScope(user_id=user)):
                return {"notes": self.call_tool("file_read", path="notes.md")}
        except ToolFailed as exc:
            return {"refused": exc.code}

    @tool(risk_level="read")
    def model_as(self, user: str) -> str:
        """Ask the model naming `user`."""
        with within_call(CallScope(user_id=user)):
            return self.llm.chat("NAMED-USER-PROBE")


if __name__ == "__main__":
    serve(NotesProbe())
'''


@pytest.fixture(scope="module")
def alice_model() -> Iterator[FakeOpenAI]:
    """The model Alice set for herself (another server, another key)."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(scope="module")
def system(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI, alice_model: FakeOpenAI
) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("two_users_app_tools")
    apps = copy_shipped_apps(build_apps_dir(root / "apps", test_apps=()), (MUSIC,))
    (apps / APP).mkdir()
    (apps / APP / "manifest.json").write_text(json.dumps(MANIFEST), encoding="utf-8")
    (apps / APP / "main.py").write_text(MAIN, encoding="utf-8")
    config = {
        **TEST_CONFIG,
        "deepseek_api_key": OWNER_MODEL,
        "llm_base_url": fake.base_url,
        "api_keys": [
            {"key": ALICE_KEY, "user": "alice"},
            {"key": BOB_KEY, "user": "bob"},
        ],
    }
    with serving(root, apps, (APP, MUSIC), config=config) as running:
        own = {"llm": {"api_key": ALICE_MODEL, "base_url": alice_model.base_url}}
        saved = requests.put(
            f"{running.url}/v1/sandbox/settings",
            json=own,
            headers={"Authorization": f"Bearer {ALICE_KEY}"},
            timeout=30,
        )
        assert saved.status_code == 200, saved.text
        notes = {"default": "owner: pay rent", "alice": "alice: buy milk"}
        notes["bob"] = "bob: call mum"
        for user, text in notes.items():
            folder = _workspace(running, user, APP)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "notes.md").write_text(text, encoding="utf-8")
            songs = _workspace(running, user, MUSIC) / "music"
            songs.mkdir(parents=True, exist_ok=True)
            wav = make_wav(0.2, title=f"{user} song", artist=f"{user} band")
            (songs / f"{user}.wav").write_bytes(wav)
        yield running


def _workspace(system: RunningSystem, user: str, app_id: str) -> Any:
    if user == "default":
        return system.workspace(app_id)
    return system.state_dir / "users" / user / "workspaces" / app_id


@pytest.fixture(autouse=True)
def _clean(fake: FakeOpenAI, alice_model: FakeOpenAI) -> None:
    fake.reset()
    alice_model.reset()


def _ask(system: RunningSystem, key: str, text: str, model: str = f"triton/{APP}") -> str:
    client = openai.OpenAI(base_url=f"{system.url}/v1", api_key=key, max_retries=0)
    reply = client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": text}],
        extra_headers={"X-AIOS-Conversation-Id": f"c-{abs(hash((key, text)))}"},
    )
    return str(reply.choices[0].message.content)


def _tool_results(model: FakeOpenAI) -> list[Any]:
    """What the tools answered, as the model read it in the agent's last request."""
    last = [r for r in model.requests if not r.is_routing][-1]
    answers = [str(m["content"]) for m in last.messages if m["role"] == "tool"]
    return [json.loads(a) if a[:1] in "{[" else a for a in answers]


def _key(request: Any) -> str:
    return str(request.headers.get("authorization"))


def test_an_apps_own_tool_serves_each_user_from_their_own_sandbox(
    system: RunningSystem, fake: FakeOpenAI, alice_model: FakeOpenAI
) -> None:
    for key, user, model, notes in (
        (ALICE_KEY, "alice", alice_model, "alice: buy milk"),
        (BOB_KEY, "bob", fake, "bob: call mum"),
        (system.token, None, fake, "owner: pay rent"),
    ):
        model.script(tool_calls_reply(("my_notes", {})), text_reply("读完了。"))
        assert _ask(system, key, "读我的笔记") == "读完了。"
        [result] = _tool_results(model)
        workdir = _workspace(system, user or "default", APP).resolve()
        assert result == {"notes": notes, "user": user, "workdir": str(workdir)}, (
            user,
            result,
        )


def test_an_apps_own_tool_cannot_act_for_another_user_by_naming_them(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(tool_calls_reply(("notes_of", {"user": "alice"})), text_reply("试过了。"))
    assert _ask(system, BOB_KEY, "读 alice 的笔记") == "试过了。"
    assert _tool_results(fake) == [{"refused": "user_not_allowed"}]


def test_the_routing_model_call_is_the_requests_users_model(
    system: RunningSystem, fake: FakeOpenAI, alice_model: FakeOpenAI
) -> None:
    text = "帮我看看今天有什么安排"
    for key, model, other, expected in (
        (ALICE_KEY, alice_model, fake, ALICE_MODEL),
        (BOB_KEY, fake, alice_model, OWNER_MODEL),
        (system.token, fake, alice_model, OWNER_MODEL),
    ):
        fake.reset()
        alice_model.reset()
        fake.routes[text] = alice_model.routes[text] = APP
        model.script(text_reply("好的。"))
        assert _ask(system, key, text, model="triton") == "好的。"
        routing = [r for r in model.requests if r.is_routing]
        assert routing and {_key(r) for r in routing} == {f"Bearer {expected}"}, key
        assert not any(r.is_routing for r in other.requests), key


def test_an_apps_model_call_naming_another_user_gets_its_own_users_model(
    system: RunningSystem, fake: FakeOpenAI, alice_model: FakeOpenAI
) -> None:
    """Bob's process names alice: the model is still the one of the user it serves
    (bob has none of his own: the owner's), never alice's."""
    fake.script(tool_calls_reply(("model_as", {"user": "alice"})), text_reply("问过了。"))
    fake.when("NAMED-USER-PROBE", text_reply("the owner's model"))
    assert _ask(system, BOB_KEY, "替我问一下模型") == "问过了。"
    assert _tool_results(fake) == ["the owner's model"]
    [asked] = [r for r in fake.requests if "NAMED-USER-PROBE" in r.prompt_text]
    assert _key(asked) == f"Bearer {OWNER_MODEL}"
    assert not any("NAMED-USER-PROBE" in r.prompt_text for r in alice_model.requests)


def test_the_music_library_of_each_user_lists_their_own_songs(
    system: RunningSystem,
) -> None:
    users = ("alice", "bob", "default")
    for key, user in ((ALICE_KEY, "alice"), (BOB_KEY, "bob"), (system.token, "default")):
        answer = _ask(system, key, "my music library", model=f"triton/{MUSIC}")
        assert f"{user} song" in answer, (user, answer)
        assert all(f"{other} song" not in answer for other in users if other != user)
