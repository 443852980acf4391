"""End to end with real processes: a real executor plus SDK apps started the way the
controller starts them (`APP_PORT` and the `AIOS_*` environment, own token).

Covers S-73 (`call_tool` through the executor, failures as `ToolFailed` codes),
S-74/S-51 (a step plan run by the executor and handed back in `tool_results`),
S-62/S-72 (a custom `@tool` run from a step) and S-76 (the design's HelloAgent).
"""

from __future__ import annotations

import json
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from aios.scaffold import scaffold_app
from aios_protocol.messages import AppRegistration, AppReply, RunResponse
from aios_runtime.json_client import pool_for
from aios_sdk import AIOSAgent, ToolFailed
from aios_sdk.client import client_from_env
from tests.procs import PYTHON, ROOT, free_port, spawn, start_executor, stop, wait_healthy

pytestmark = pytest.mark.process

HERE = Path(__file__).resolve().parent


@dataclass
class Executor:
    url: str
    token: str
    state_dir: Path

    def audit(self, session_id: str) -> list[dict]:
        path = self.state_dir / "tool_calls" / f"{session_id}.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text("utf-8").splitlines()]

    def headers(self) -> dict[str, str]:
        return {"X-AIOS-Token": self.token}

    def register(self, registration: AppRegistration) -> None:
        response = requests.put(
            f"{self.url}/apps/{registration.app_id}",
            json=registration.dump(),
            headers=self.headers(),
            timeout=5,
        )
        assert response.status_code == 200, response.text

    def run(self, app_id: str, steps: list[dict]) -> RunResponse:
        response = requests.post(
            f"{self.url}/run",
            json={"app_id": app_id, "session_id": "sess_sdk", "steps": steps},
            headers=self.headers(),
            timeout=30,
        )
        assert response.status_code == 200, response.text
        return RunResponse.model_validate(response.json())


@dataclass
class App:
    app_id: str
    url: str
    token: str
    workdir: Path

    def post(self, path: str, body: dict) -> requests.Response:
        return requests.post(
            f"{self.url}{path}", json=body, headers={"X-AIOS-Token": self.token}, timeout=30
        )

    def handle(self, **body: object) -> dict:
        response = self.post("/handle", body)
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture(scope="module")
def executor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Executor]:
    home = tmp_path_factory.mktemp("executor")
    proc, url, token = start_executor(home)
    try:
        yield Executor(url, token, home / "executor" / "state")
    finally:
        stop(proc)


def _start_app(
    executor: Executor,
    folder: Path,
    app_id: str,
    workdir: Path,
    log_dir: Path,
    *,
    settings: dict | None = None,
    user_id: str | None = None,
) -> tuple[App, object]:
    """Start `folder/main.py` as the controller would and register it with the executor
    (with `user_id`: as the app's process serving that user alone)."""
    port = free_port()
    token = secrets.token_urlsafe(24)
    env = {
        "APP_PORT": str(port),
        "AIOS_APP_ID": app_id,
        "AIOS_WORKDIR": str(workdir),
        "AIOS_EXECUTOR_URL": executor.url,
        "AIOS_TOKEN": token,
        "AIOS_APP_SETTINGS": json.dumps(settings or {}),
        **({"AIOS_USER_ID": user_id} if user_id else {}),
    }
    log = log_dir / f"{app_id}{'@' + user_id if user_id else ''}.log"
    proc = spawn([PYTHON, "main.py"], env=env, cwd=folder, log=log)
    app = App(app_id, f"http://127.0.0.1:{port}", token, workdir)
    try:
        wait_healthy(f"{app.url}/health", proc)
        listing = requests.get(
            f"{app.url}/manifest", headers={"X-AIOS-Token": token}, timeout=5
        ).json()
        executor.register(
            AppRegistration(
                app_id=app_id,
                workdir=str(workdir),
                token=token,
                url=app.url,
                custom_tools=listing["tools"],
                user_id=user_id,
            )
        )
    except BaseException:
        stop(proc)  # type: ignore[arg-type]
        raise
    return app, proc


@pytest.fixture(scope="module")
def hello(executor: Executor, tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    folder = ROOT / "apps" / "hello_app"
    app, proc = _start_app(
        executor, folder, "hello_app", folder / "workspace", tmp_path_factory.mktemp("logs")
    )
    try:
        yield app
    finally:
        stop(proc)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def tool_app(executor: Executor, tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    workdir = tmp_path_factory.mktemp("tool_ws")
    (workdir / "present.txt").write_text("在这里", encoding="utf-8")
    app, proc = _start_app(
        executor,
        HERE / "tool_app",
        "tool_app",
        workdir,
        tmp_path_factory.mktemp("logs"),
        settings={"level": 3},
    )
    try:
        yield app
    finally:
        stop(proc)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- S-76


def test_hello_agent_greets_with_the_workspace_greeting(
    hello: App, executor: Executor
) -> None:
    """It greets, whatever was said: it never says the instruction back."""
    reply = hello.handle(instruction="跟我打个招呼", context={"session_id": "sess_hello"})
    parsed = AppReply.model_validate(reply)
    assert parsed.status == "ok", reply
    assert parsed.view_type == "text"
    assert reply["data"]["content"] == "你好！很高兴见到你。"
    assert [(a.type, a.label, a.action_id) for a in parsed.actions] == [
        ("button", "再说一次", "again")
    ]
    assert reply["message"] == "已回复"
    # call_tool sent the session of the call it served: the executor's audit shows it
    audit = executor.audit("sess_hello")
    assert [(line["app_id"], line["tool"], line["status"]) for line in audit] == [
        ("hello_app", "file_read", "ok")
    ], audit


def test_hello_agent_speaks_english_when_the_user_reads_english(hello: App) -> None:
    english = {"language": "en-US"}
    reply = hello.handle(instruction="say hello to the world", context=english)
    assert reply["data"]["content"] == "Hello! Nice to meet you."
    assert reply["message"] == "Replied"
    assert [a["label"] for a in reply["actions"]] == ["Say it again"]
    again = hello.handle(
        instruction=None, context=english, action_request={"action_id": "again"}
    )
    assert again["data"]["content"] == "Hello! Nice to meet you."


def test_hello_agent_initial_view_and_manifest(hello: App) -> None:
    reply = hello.handle(instruction="", context={})
    assert reply["data"]["content"] == "你好！很高兴见到你。"  # on first open too
    listing = requests.get(
        f"{hello.url}/manifest", headers={"X-AIOS-Token": hello.token}, timeout=5
    ).json()
    assert listing["manifest"]["name"] == "Hello小AI"
    assert listing["manifest"]["role_prompt"] == "你是一个友好的小AI，负责打招呼"
    assert listing["tools"] == []


# --------------------------------------------------------------------------- S-73


def test_call_tool_returns_the_result_and_failures_carry_codes(tool_app: App) -> None:
    ok = tool_app.handle(instruction="present.txt", context={"session_id": "s1"})
    assert ok["data"] == {"content": "在这里"}

    outside = tool_app.handle(instruction="../../etc/passwd", context={})
    assert outside["data"]["code"] == "path_outside_workdir", outside

    missing = tool_app.handle(instruction="missing.txt", context={})
    assert missing["data"]["code"] == "file_not_found", missing
    assert "missing.txt" in missing["data"]["content"]


class Probe(AIOSAgent):
    name = "probe"
    description = "calls tools from the test process"
    icon = "🔎"
    role_prompt = "probe"

    def handle(self, instruction, context, action_request=None):
        return {"status": "ok", "view_type": "text", "data": {}}


def test_call_tool_from_the_test_process(
    tool_app: App, executor: Executor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIOS_EXECUTOR_URL", executor.url)
    monkeypatch.setenv("AIOS_TOKEN", tool_app.token)
    probe = Probe()
    assert probe.call_tool("file_read", path="workspace/present.txt") == "在这里"
    written = probe.call_tool("file_write", path="from_probe.txt", content="写入")
    assert (tool_app.workdir / "from_probe.txt").read_text(encoding="utf-8") == "写入"
    assert written["size"] == len("写入".encode())

    # the kept-alive connection to the executor is reused between calls
    client = client_from_env()
    executor_port = int(client.url.rsplit(":", 1)[1])
    opened = pool_for("127.0.0.1", executor_port).num_connections
    assert probe.call_tool("file_read", path="present.txt") == "在这里"
    assert pool_for("127.0.0.1", executor_port).num_connections == opened

    with pytest.raises(ToolFailed) as err:
        probe.call_tool("file_write", path="x.txt", content=object())
    assert err.value.code == "invalid_args"

    with pytest.raises(ToolFailed) as err:
        probe.call_tool("file_read", path="/etc/passwd")
    assert err.value.code == "path_outside_workdir"

    with pytest.raises(ToolFailed) as err:
        probe.call_tool("no_such_tool", x=1)
    assert err.value.code == "unknown_tool"

    monkeypatch.setenv("AIOS_TOKEN", "not-a-registered-token")
    with pytest.raises(ToolFailed) as err:
        probe.call_tool("file_read", path="present.txt")
    assert err.value.code == "forbidden"

    monkeypatch.setenv("AIOS_EXECUTOR_URL", f"http://127.0.0.1:{free_port()}")
    with pytest.raises(ToolFailed) as err:
        probe.call_tool("file_read", path="present.txt")
    assert err.value.code == "executor_unreachable"


# ---------------------------------------------------------------------- S-62/S-72


def test_custom_tool_runs_from_a_step_through_the_executor(
    tool_app: App, executor: Executor
) -> None:
    listing = requests.get(
        f"{executor.url}/tools",
        params={"app_id": "tool_app"},
        headers=executor.headers(),
        timeout=5,
    ).json()
    names = {spec["name"] for spec in listing["tools"]}
    assert {"shout", "settings_echo", "file_read"} <= names

    outcome = executor.run(
        "tool_app",
        [
            {"step_id": 1, "tool": "shout", "args": {"word": "hello", "times": 2}},
            {
                "step_id": 2,
                "tool": "file_write",
                "args": {"path": "shout.txt", "content": "{{step_1.result}}"},
            },
            {"step_id": 3, "tool": "settings_echo", "args": {}},
            {"step_id": 4, "tool": "shout", "args": {"word": 5}},
        ],
    ).tool_results
    assert outcome["step_1"].status == "ok" and outcome["step_1"].result == "HELLO HELLO"
    assert outcome["step_2"].status == "ok", outcome["step_2"]
    assert (tool_app.workdir / "shout.txt").read_text(encoding="utf-8") == "HELLO HELLO"
    assert outcome["step_3"].result == {"settings": {"level": 3}, "app_id": "tool_app"}
    assert outcome["step_4"].status == "error"
    assert "argument 'word' must be string" in (outcome["step_4"].error or "")


def test_tool_metadata_and_a_pydantic_input_reach_the_executor(
    tool_app: App, executor: Executor
) -> None:
    listing = requests.get(
        f"{executor.url}/tools",
        params={"app_id": "tool_app"},
        headers=executor.headers(),
        timeout=5,
    ).json()
    tools = {entry["name"]: entry for entry in listing["tools"]}
    repeat = tools["repeat"]
    assert (repeat["risk_level"], repeat["concurrency_safe"]) == ("read", True)
    assert repeat["max_result_size_chars"] == 50
    assert repeat["input_schema"]["required"] == ["word"]
    assert tools["shout"]["risk_level"] == "write"  # nothing stated: the default
    outcome = executor.run(
        "tool_app",
        [
            {"step_id": 1, "tool": "repeat", "args": {"word": "ab", "times": 3}},
            {"step_id": 2, "tool": "repeat", "args": {"times": 3}},
        ],
    ).tool_results
    assert outcome["step_1"].result == "ab-ab-ab"
    assert outcome["step_2"].status == "error"
    assert "word" in (outcome["step_2"].error or "")


def test_available_tools_and_run_steps_go_through_the_executor(
    tool_app: App, executor: Executor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIOS_EXECUTOR_URL", executor.url)
    monkeypatch.setenv("AIOS_TOKEN", tool_app.token)
    monkeypatch.setenv("AIOS_APP_ID", "tool_app")
    probe = Probe()
    names = {entry["name"] for entry in probe.available_tools()}
    assert {"file_read", "shout", "repeat"} <= names
    results = probe.run_steps(
        [
            {"tool": "file_read", "args": {"path": "present.txt"}},
            {"tool": "shout", "args": {"word": "{{step_1.result}}"}},
            {"tool": "process_start", "args": {"cmd": ["python3", "-V"]}},
        ]
    )
    assert results["step_1"]["result"] == "在这里"
    assert results["step_2"]["result"] == "在这里".upper()
    # the executor's own consent check: a risky call needs a reviewed plan
    assert results["step_3"]["code"] == "needs_confirmation"
    # audited like every planned step (outside a call: no session)
    audit = [(line["app_id"], line["tool"]) for line in executor.audit("no_session")]
    assert ("tool_app", "shout") in audit and ("tool_app", "process_start") in audit


# ---------------------------------------------------------------------- S-74/S-51


def test_plan_steps_round_trip_with_a_scaffolded_app(
    executor: Executor, tmp_path: Path
) -> None:
    folder = scaffold_app(tmp_path / "apps", "notes_app", name="笔记")
    (folder / "workspace" / "a.txt").write_text("a", encoding="utf-8")
    (folder / "workspace" / "b.txt").write_text("b", encoding="utf-8")
    app, proc = _start_app(executor, folder, "notes_app", folder / "workspace", tmp_path)
    try:
        action = {"action_id": "list_files"}
        planned = app.handle(
            instruction=None, context={"session_id": "s"}, action_request=action
        )
        assert planned["view_type"] == "loading" and planned["message"] == "正在处理..."
        results = executor.run("notes_app", planned["steps"]).model_dump(mode="json")
        final = app.handle(
            instruction=None,
            context={"session_id": "s", **results},
            action_request=action,
        )
        assert final["status"] == "ok" and final["view_type"] == "list", final
        titles = " ".join(item["title"] for item in final["data"]["items"])
        assert "a.txt" in titles and "b.txt" in titles
    finally:
        stop(proc)  # type: ignore[arg-type]
    shutil.rmtree(folder)


def test_run_steps_works_in_the_sandbox_of_the_user_the_process_serves(
    tool_app: App, executor: Executor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process's token names its user: the app's own process acts for the owner,
    one registered for alice acts for alice, and neither for anyone else."""
    from aios_runtime.users import user_app_workdir
    from aios_sdk.agent import CallScope, within_call

    alices = user_app_workdir(executor.state_dir, "alice", "tool_app")
    alices.mkdir(parents=True, exist_ok=True)
    (alices / "present.txt").write_text("alice's", encoding="utf-8")
    alice_token = secrets.token_urlsafe(24)
    executor.register(
        AppRegistration(
            app_id="tool_app",
            workdir=str(alices),
            token=alice_token,
            url=tool_app.url,
            user_id="alice",
        )
    )
    monkeypatch.setenv("AIOS_EXECUTOR_URL", executor.url)
    monkeypatch.setenv("AIOS_APP_ID", "tool_app")
    probe = Probe()
    read = [{"tool": "file_read", "args": {"path": "present.txt"}}]

    def refused(user: str) -> str:
        with within_call(CallScope(user_id=user)), pytest.raises(ToolFailed) as no:
            probe.run_steps(read)
        return no.value.code

    monkeypatch.setenv("AIOS_TOKEN", tool_app.token)
    assert probe.run_steps(read)["step_1"]["result"] == "在这里"  # the owner's
    assert refused("alice") == "user_not_allowed"
    monkeypatch.setenv("AIOS_TOKEN", alice_token)
    assert probe.run_steps(read)["step_1"]["result"] == "alice's"
    with within_call(CallScope(user_id="alice")):
        assert probe.call_tool("file_read", path="present.txt") == "alice's"
    assert refused("bob") == "user_not_allowed"
    assert refused("default") == "user_not_allowed"
    requests.delete(
        f"{executor.url}/apps/tool_app?user_id=alice",
        headers=executor.headers(),
        timeout=10,
    )


def test_a_custom_tool_runs_in_the_process_serving_the_user_of_the_call(
    tool_app: App, executor: Executor, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from aios_runtime.users import user_app_workdir

    alices = user_app_workdir(executor.state_dir, "alice", "tool_app")
    alices.mkdir(parents=True, exist_ok=True)
    (alices / "present.txt").write_text("alice's", encoding="utf-8")
    alice_app, proc = _start_app(
        executor,
        HERE / "tool_app",
        "tool_app",
        alices,
        tmp_path_factory.mktemp("logs"),
        user_id="alice",
    )
    step = {"step_id": 1, "tool": "read_present", "args": {}}
    try:
        for user, expected in (
            ("alice", {"content": "alice's", "workdir": str(alices)}),
            (None, {"content": "在这里", "workdir": str(tool_app.workdir)}),
        ):
            response = requests.post(
                f"{executor.url}/run",
                json={"app_id": "tool_app", "steps": [step], "user_id": user},
                headers=executor.headers(),
                timeout=30,
            )
            assert response.status_code == 200, response.text
            result = response.json()["tool_results"]["step_1"]
            assert result["status"] == "ok" and result["result"] == expected, result
        # no process of the app serves bob: his call of its own tool reaches none
        response = requests.post(
            f"{executor.url}/run",
            json={"app_id": "tool_app", "steps": [step], "user_id": "bob"},
            headers=executor.headers(),
            timeout=30,
        )
        result = response.json()["tool_results"]["step_1"]
        assert result["status"] == "error" and result["code"] == "app_unavailable"
        # what a caller of the app's tool route names is not heard: the body is refused
        answer = alice_app.post(
            "/tools/read_present", {"args": {}, "user_id": "bob", "user_grant": "0" * 40}
        )
        assert answer.status_code == 400, answer.text
    finally:
        stop(proc)  # type: ignore[arg-type]
        requests.delete(
            f"{executor.url}/apps/tool_app?user_id=alice",
            headers=executor.headers(),
            timeout=10,
        )
