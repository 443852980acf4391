"""Two users of one running system through `/v1`, each with a key bound to them
(SECURITY.md U1, U2): the code app writes, lists and reads each one's files in
their own sandbox; neither sees the other's, through the app, `shell_exec` or
`aios mcp --user`; a key bound to one user is refused as the other."""

from __future__ import annotations

import copy
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import openai
import pytest
import requests
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.controller.system import (
    TEST_CONFIG,
    RunningSystem,
    build_apps_dir,
    serving,
)
from tests.procs import ROOT, wait_for
from tests.security.conftest import add_security_apps

pytestmark = pytest.mark.slow

ALICE_KEY = "sk-alice-key-0123456789abcdef"
BOB_KEY = "sk-bob-key-0123456789abcdef"
WEBUI_KEY = "sk-webui-key-0123456789abcdef"  # one front end's key for its users
ANN = "3f6c1e2a-8d4b-4c1e-9a77-0b1c2d3e4f50"  # user ids as Open WebUI forwards them
BEN = "9a0d44b1-2c3d-4e5f-8a9b-112233445566"
SNIPPET = "snippet.py"  # where the code app keeps a snippet it runs


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("two_users")
    apps = build_apps_dir(root / "apps", test_apps=())
    shutil.copytree(
        ROOT / "apps" / "code_app",
        apps / "code_app",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    config = copy.deepcopy(TEST_CONFIG)
    config["api_keys"] = [
        {"key": ALICE_KEY, "user": "alice"},
        {"key": BOB_KEY, "users": ["bob"]},
        {"key": WEBUI_KEY, "users": [ANN, BEN]},
    ]
    add_security_apps(apps, ("risky_app",))
    with serving(root, apps, ("code_app", "risky_app"), config=config) as running:
        yield running


def _client(system: RunningSystem, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{system.url}/v1", api_key=key, max_retries=0)


def _ask(
    system: RunningSystem,
    key: str,
    text: str,
    *,
    app: str = "code_app",
    conversation: str | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> str:
    reply = _client(system, key).chat.completions.create(
        model=f"triton/{app}",
        messages=[{"role": "user", "content": text}],
        extra_headers={
            "X-AIOS-Conversation-Id": conversation or f"c-{abs(hash(text))}",
            **(headers or {}),
        },
        **extra,
    )
    return reply.choices[0].message.content or ""


def _sandbox(system: RunningSystem, user: str) -> Path:
    return system.state_dir / "users" / user / "workspaces" / "code_app"


def test_each_user_writes_lists_and_reads_only_their_own_files(
    system: RunningSystem,
) -> None:
    ran = _ask(system, ALICE_KEY, "执行代码 print('alice-' + 'secret')")
    assert "alice-secret" in ran, ran
    ran = _ask(system, BOB_KEY, "执行代码 print('bob-' + 'only')")
    assert "bob-only" in ran, ran
    assert "alice" in (_sandbox(system, "alice") / SNIPPET).read_text()
    assert "bob" in (_sandbox(system, "bob") / SNIPPET).read_text()
    assert not (system.workspace("code_app") / SNIPPET).exists()  # not the owner's
    shown = _ask(system, ALICE_KEY, f"查看 {SNIPPET}")
    assert "alice" in shown and "bob" not in shown, shown
    shown = _ask(system, BOB_KEY, f"查看 {SNIPPET}")
    assert "bob" in shown and "alice" not in shown, shown
    listed = _ask(system, BOB_KEY, "列出我的代码文件")
    assert SNIPPET in listed, listed


def test_a_key_bound_to_one_user_is_refused_as_another(system: RunningSystem) -> None:
    alice = _client(system, ALICE_KEY)
    with pytest.raises(openai.PermissionDeniedError) as refused:
        alice.chat.completions.create(
            model="triton/code_app",
            messages=[{"role": "user", "content": f"查看 {SNIPPET}"}],
            user="bob",
        )
    assert refused.value.code == "user_not_allowed"
    with pytest.raises(openai.PermissionDeniedError):
        alice.chat.completions.create(
            model="triton/code_app",
            messages=[{"role": "user", "content": f"查看 {SNIPPET}"}],
            extra_headers={"X-AIOS-User-Id": "bob"},
        )
    assert _ask(system, ALICE_KEY, f"查看 {SNIPPET}", user="alice")  # its own: fine
    for bad in ("../../etc", "a/b", "x" * 5000, ".hidden"):
        answer = requests.post(
            f"{system.url}/v1/chat/completions",
            json={
                "model": "triton",
                "user": bad,
                "messages": [{"role": "user", "content": "hi"}],
            },
            headers={"Authorization": f"Bearer {system.token}"},
            timeout=30,
        )
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"]["param"] == "user"
    assert sorted(p.name for p in (system.state_dir / "users").iterdir()) == [
        "alice",
        "bob",
        "default",
    ]


def _mcp_calls(
    system: RunningSystem, user: str, calls: list[tuple[str, dict]]
) -> list[Any]:
    argv = [
        "-m",
        "aios",
        "mcp",
        "--app",
        "code_app",
        "--user",
        user,
        "--apps-dir",
        str(system.apps_dir),
        "--state-dir",
        str(system.state_dir),
    ]
    params = StdioServerParameters(
        command=sys.executable,
        args=argv,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"]},
    )
    results: list[Any] = []

    async def host() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            with anyio.fail_after(90):
                await s.initialize()
                for name, args in calls:
                    results.append(await s.call_tool(name, args))

    anyio.run(host)
    return results


def _text(result: Any) -> str:
    return result.content[0].text if result.content else ""


def test_aios_mcp_for_one_user_sees_only_that_users_sandbox(
    system: RunningSystem,
) -> None:
    _ask(system, ALICE_KEY, "执行代码 print('alice-' + 'secret')")
    _ask(system, BOB_KEY, "执行代码 print('bob-' + 'only')")
    alice_file = _sandbox(system, "alice") / SNIPPET
    read, listed, ran, stolen, over = _mcp_calls(
        system,
        "bob",
        [
            ("file_read", {"path": SNIPPET}),
            ("file_list", {"path": "."}),
            ("shell_exec", {"cmd": ["python3", SNIPPET]}),
            ("file_read", {"path": str(alice_file)}),
            ("shell_exec", {"cmd": ["python3", str(alice_file)]}),
        ],
    )
    assert "bob" in _text(read) and "alice" not in _text(read)
    assert SNIPPET in _text(listed)
    assert "bob-only" in _text(ran)
    assert stolen.is_error and "path_outside_workdir" in _text(stolen)
    assert over.is_error and "alice-secret" not in _text(over)
    (mine,) = _mcp_calls(system, "alice", [("file_read", {"path": SNIPPET})])
    assert "alice" in _text(mine)


def _schedules(
    system: RunningSystem, key: str, method: str, path: str = "", **kw: Any
) -> requests.Response:
    return requests.request(
        method,
        f"{system.url}/v1/sandbox/schedules{path}",
        headers={"Authorization": f"Bearer {key}", **kw.pop("headers", {})},
        timeout=30,
        **kw,
    )


def test_each_user_schedules_and_sees_only_their_own_jobs(system: RunningSystem) -> None:
    _ask(system, ALICE_KEY, "执行代码 print('alice-' + 'secret')")
    job = {
        "name": "alice's run",
        "execution_type": "command",
        "schedule_type": "interval",
        "interval_s": 3600,
        "app_id": "code_app",
        "command": ["python3", SNIPPET],
        "user_id": "bob",  # not taken: the job is its maker's
    }
    made = _schedules(system, ALICE_KEY, "POST", json=job)
    assert made.status_code == 201, made.text
    job_id = made.json()["id"]
    assert made.json()["user_id"] == "alice"
    assert [j["id"] for j in _schedules(system, ALICE_KEY, "GET").json()["jobs"]] == [
        job_id
    ]
    assert _schedules(system, BOB_KEY, "GET").json()["jobs"] == []
    for method, path in (("POST", "/run"), ("GET", "/runs"), ("DELETE", ""), ("PATCH", "")):
        answer = _schedules(system, BOB_KEY, method, f"/{job_id}{path}", json={"name": "x"})
        assert answer.status_code == 404, (method, path, answer.text)
        assert answer.json()["error"]["code"] == "not_found"
    as_bob = _schedules(system, ALICE_KEY, "GET", headers={"X-AIOS-User-Id": "bob"})
    assert (
        as_bob.status_code == 403 and as_bob.json()["error"]["code"] == "user_not_allowed"
    )
    assert _schedules(system, ALICE_KEY, "POST", f"/{job_id}/run").status_code == 202

    def finished() -> list[dict[str, Any]]:
        runs = _schedules(system, ALICE_KEY, "GET", f"/{job_id}/runs").json()["runs"]
        return [r for r in runs if r.get("finished")]

    wait_for(lambda: finished(), 60, "alice's job to run")
    (run,) = finished()
    assert run["status"] == "ok" and "alice-secret" in run["output_tail"], run
    # the desktop's /api/schedules is the owner's: alice's job and runs are hers alone
    desktop = system.get("/api/schedules").json()["jobs"]
    assert job_id not in {j["id"] for j in desktop}
    for method, path in (("GET", "/runs"), ("POST", "/run"), ("DELETE", "")):
        answer = requests.request(
            method,
            f"{system.url}/api/schedules/{job_id}{path}",
            headers=system.headers,
            timeout=30,
        )
        assert answer.status_code == 404, (method, path, answer.text)
    renamed = _schedules(system, ALICE_KEY, "PATCH", f"/{job_id}", json={"name": "mine"})
    assert renamed.status_code == 200 and renamed.json()["name"] == "mine"
    assert _schedules(system, ALICE_KEY, "DELETE", f"/{job_id}").status_code == 200
    assert _schedules(system, ALICE_KEY, "GET").json()["jobs"] == []


def _questions(system: RunningSystem, key: str) -> list[dict[str, Any]]:
    answer = requests.get(
        f"{system.url}/v1/sandbox/confirmations",
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    return answer.json()["confirmations"]


def test_a_question_is_answered_only_by_its_user_in_its_conversation(
    system: RunningSystem,
) -> None:
    asked = _ask(system, ALICE_KEY, "启动进程", app="risky_app", conversation="alice-1")
    assert "确认" in asked, asked
    (waiting,) = _questions(system, ALICE_KEY)
    question = waiting["confirmation_id"]
    assert waiting["user_id"] == "alice"
    assert _questions(system, BOB_KEY) == []
    desktop = requests.get(
        f"{system.url}/api/confirmations", headers=system.headers, timeout=30
    ).json()["confirmations"]
    assert question not in {c["confirmation_id"] for c in desktop}
    # "确认" from bob's conversation, and from alice's other one, answers nothing
    _ask(system, BOB_KEY, "确认", app="risky_app", conversation="alice-1")
    _ask(system, ALICE_KEY, "确认", app="risky_app", conversation="alice-2")
    assert question in {c["confirmation_id"] for c in _questions(system, ALICE_KEY)}
    for key in (BOB_KEY, system.token):
        refused = requests.post(
            f"{system.url}/v1/sandbox/confirmations/{question}",
            json={"decision": "allow_once"},
            headers={"Authorization": f"Bearer {key}"},
            timeout=30,
        )
        assert refused.status_code == 404, refused.text
    refused = requests.post(
        f"{system.url}/api/confirmations/{question}",
        json={"decision": "allow_once"},
        headers=system.headers,
        timeout=30,
    )
    assert refused.status_code == 404, refused.text
    answered = requests.post(
        f"{system.url}/v1/sandbox/confirmations/{question}",
        json={"decision": "allow_once"},
        headers={"Authorization": f"Bearer {ALICE_KEY}"},
        timeout=60,
    )
    assert answered.status_code == 200, answered.text
    assert answered.json()["status"] == "ok"
    assert question not in {c["confirmation_id"] for c in _questions(system, ALICE_KEY)}


def test_a_user_over_their_quota_gets_a_clear_refusal_and_loses_nothing(
    system: RunningSystem,
) -> None:
    big = _sandbox(system, "alice") / "big.bin"
    big.parent.mkdir(parents=True, exist_ok=True)
    big.write_bytes(b"\0" * (2 * 1024 * 1024))
    changed = requests.put(
        f"{system.url}/api/settings",
        json={"users": {"disk_quota_mb": 1}},
        headers=system.headers,
        timeout=30,
    )
    assert changed.status_code == 200, changed.text
    try:
        with pytest.raises(openai.RateLimitError) as refused:
            _ask(system, ALICE_KEY, f"查看 {SNIPPET}")
        assert refused.value.code == "user_limit_reached"
        assert "quota" in refused.value.message
        assert big.stat().st_size == 2 * 1024 * 1024  # nothing of hers deleted
        ran = _ask(system, BOB_KEY, "执行代码 print('bob-' + 'only')")
        assert "bob-only" in ran  # bob is not held
    finally:
        requests.put(
            f"{system.url}/api/settings",
            json={"users": {"disk_quota_mb": 0}},
            headers=system.headers,
            timeout=30,
        )
        big.unlink()


def test_a_front_ends_key_serves_each_of_its_users_in_their_own_sandbox(
    system: RunningSystem,
) -> None:
    for person in (ANN, BEN):
        ran = _ask(
            system,
            WEBUI_KEY,
            f"执行代码 print('{person[:4]}' + '-mine')",
            headers={"X-AIOS-User-Id": person},
        )
        assert f"{person[:4]}-mine" in ran, ran
        assert person[:4] in (_sandbox(system, person) / SNIPPET).read_text()
    assert ANN[:4] not in (_sandbox(system, BEN) / SNIPPET).read_text()
    with pytest.raises(openai.PermissionDeniedError):
        _ask(system, WEBUI_KEY, "列出我的代码文件", headers={"X-AIOS-User-Id": "bob"})
    # naming nobody acts for the first user listed
    shown = _ask(system, WEBUI_KEY, f"查看 {SNIPPET}")
    assert ANN[:4] in shown and BEN[:4] not in shown, shown


def test_a_new_user_starts_with_the_files_the_app_ships(system: RunningSystem) -> None:
    """A user's first call of an app finds the app's shipped workspace files in their
    own sandbox, as the owner's first start did (the hello app reads its greeting)."""
    answered = _ask(system, BOB_KEY, "跟我打个招呼", app="hello_app")
    assert answered.startswith("你好"), answered
    bobs = system.state_dir / "users" / "bob" / "workspaces" / "hello_app"
    assert (bobs / "greeting.txt").read_text(encoding="utf-8").strip() == "你好"
    assert bobs.stat().st_mode & 0o077 == 0  # theirs alone
