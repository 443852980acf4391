"""Which planned steps need confirmation (controller/permissions/policy.py), as plain logic,
and the pending-confirmation store (controller/permissions/confirmations.py) on a real folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aios_protocol.errors import InvalidRequest, NotFound
from aios_protocol.messages import ToolInfo
from aios_runtime.settings import Settings
from controller.events import EventBus
from controller.permissions.confirmations import ConfirmationGate, denied_results
from controller.permissions.policy import PermissionPolicy, RiskyStep, sql_writes


def policy(
    tmp_path: Path, ask: bool = False, app_whitelist: list[str] | None = None
) -> PermissionPolicy:
    settings = Settings.model_validate({"tool_sandbox": {"ask_outside_whitelist": ask}})
    return PermissionPolicy(
        tmp_path / "permissions.json", lambda: settings, lambda _: app_whitelist
    )


def kinds(review) -> list[str]:
    return [step.kind for step in review.risky]


@pytest.mark.parametrize(
    ("sql", "writes"),
    [
        ("SELECT * FROM t", False),
        ("select 'insert into x' as s", False),  # inside a literal
        ("SELECT 1 -- DROP TABLE t", False),  # inside a comment
        ("PRAGMA integrity_check", False),
        ("INSERT INTO t VALUES (1)", True),
        ("  update t set x = 1", True),
        ("WITH c AS (SELECT 1) DELETE FROM t", True),
        ("CREATE TABLE t(x)", True),
        ("DROP TABLE t", True),
        ("ALTER TABLE t ADD y", True),
        ("REPLACE INTO t VALUES (1)", True),
    ],
)
def test_sql_writes(sql: str, writes: bool) -> None:
    assert sql_writes(sql) is writes


def test_process_start_and_db_writes_are_risky_reads_are_not(tmp_path: Path) -> None:
    rules = policy(tmp_path)
    plan = [
        {
            "step_id": 1,
            "tool": "process_start",
            "args": {"cmd": "python3 serve.py", "background": True},
        },
        {"step_id": 2, "tool": "db_query", "args": {"dsn": "d.db", "sql": "DELETE FROM t"}},
        {"step_id": 3, "tool": "db_query", "args": {"dsn": "d.db", "sql": "SELECT 1"}},
        {
            "step_id": 4,
            "tool": "db_query",
            "args": {"dsn": "d.db", "sql": "{{step_1.result}}"},
        },
        {"step_id": 5, "tool": "file_read", "args": {"path": "x"}},
        {"step_id": 6, "tool": "shell_exec", "args": {"cmd": ["ls"]}},
    ]
    review = rules.review("app", tmp_path, plan)
    assert kinds(review) == ["process_start", "db_write", "db_write"]
    assert (
        "python3 serve.py" in review.risky[0].sentence
        and "后台" in review.risky[0].sentence
    )
    assert review.risky[0].command == "python3"


def test_overwrites_of_files_that_are_not_the_apps_own(tmp_path: Path) -> None:
    rules = policy(tmp_path)
    work = tmp_path / "w"
    work.mkdir()
    (work / "shipped.txt").write_text("shipped")

    def review(path: str, mode: str = "overwrite"):
        step = {
            "step_id": 1,
            "tool": "file_write",
            "args": {"path": path, "content": "x", "mode": mode},
        }
        return rules.review("app", work, [step])

    assert kinds(review("shipped.txt")) == ["file_overwrite"]
    assert kinds(review("workspace/shipped.txt")) == ["file_overwrite"]
    assert kinds(review(str(work / "shipped.txt"))) == ["file_overwrite"]
    assert kinds(review("shipped.txt", mode="append")) == []
    assert kinds(review("{{step_1.result.path}}")) == ["file_overwrite"]
    assert kinds(review("../outside.txt")) == []  # the executor refuses it anyway
    fresh = review("new.txt")
    assert kinds(fresh) == [] and fresh.new_files == {1: "new.txt"}
    rules.record_created("app", fresh.new_files, {"step_1": {"status": "ok"}})
    (work / "new.txt").write_text("x")
    assert kinds(review("new.txt")) == []  # now the app's own
    assert kinds(
        rules.review(
            "other_app",
            work,
            [
                {
                    "step_id": 1,
                    "tool": "file_write",
                    "args": {"path": "new.txt", "content": "y"},
                }
            ],
        )
    ) == ["file_overwrite"]
    failed = review("failed.txt")
    rules.record_created("app", failed.new_files, {"step_1": {"status": "error"}})
    (work / "failed.txt").write_text("someone else's")
    assert kinds(review("failed.txt")) == ["file_overwrite"]
    saved = json.loads((tmp_path / "permissions.json").read_text())
    assert saved["own_files"] == {"app": ["new.txt"]}


def test_commands_outside_the_whitelist_only_when_asking_is_allowed(tmp_path: Path) -> None:
    step = [{"step_id": 1, "tool": "shell_exec", "args": {"cmd": "wc -l notes.txt"}}]
    assert kinds(policy(tmp_path).review("app", tmp_path, step)) == []
    asking = policy(tmp_path, ask=True)
    review = asking.review("app", tmp_path, step)
    assert kinds(review) == ["command_outside_whitelist"] and review.outside_whitelist == [
        "wc"
    ]
    assert "wc -l notes.txt" in review.risky[0].sentence
    inside = policy(tmp_path, ask=True, app_whitelist=["wc"]).review("app", tmp_path, step)
    assert kinds(inside) == [] and inside.outside_whitelist == []


def test_allow_always_is_per_app_tool_and_program_and_survives_a_restart(
    tmp_path: Path,
) -> None:
    rules = policy(tmp_path)
    plan = [{"step_id": 1, "tool": "process_start", "args": {"cmd": ["python3", "a.py"]}}]
    rules.remember("app", rules.review("app", tmp_path, plan).risky)
    again = policy(tmp_path)  # read back from permissions.json
    assert kinds(again.review("app", tmp_path, plan)) == []
    assert [s.tool for s in again.review("app", tmp_path, plan).allowed_by_rule] == [
        "process_start"
    ]
    assert kinds(again.review("other", tmp_path, plan)) == ["process_start"]
    other_program = [
        {"step_id": 1, "tool": "process_start", "args": {"cmd": ["node", "a.js"]}}
    ]
    assert kinds(again.review("app", tmp_path, other_program)) == ["process_start"]


def test_pending_confirmations_are_stored_listed_and_claimed_once(tmp_path: Path) -> None:
    events = EventBus()
    gate = ConfirmationGate(tmp_path / "confirmations", events)
    rules = policy(tmp_path)
    plan = [
        {"step_id": 1, "tool": "db_query", "args": {"dsn": "d.db", "sql": "DROP TABLE t"}},
        {"step_id": 2, "tool": "file_read", "args": {"path": "x"}},
    ]
    risky = rules.review("app", tmp_path, plan).risky
    reply = gate.pause(
        app_id="app",
        app_name="应用",
        session_id="sess_abcd",
        plan=plan,
        risky=risky,
        round_no=1,
        task_id="t1",
        instruction="删表",
        action_request=None,
        upstream=None,
    )
    cid = reply.data["confirmation_id"]
    assert reply.view_type == "confirm" and "DROP TABLE t" in reply.data["summary"]
    assert [
        p.confirmation_id
        for p in ConfirmationGate(tmp_path / "confirmations", events).pending()
    ] == [cid]
    assert events.since(0)[-1].type == "confirm_request"
    with pytest.raises(InvalidRequest):
        gate.claim(cid, "perhaps")
    with pytest.raises(NotFound):
        gate.claim("conf_../../x", "deny")
    claimed = gate.claim(cid, "deny")
    assert claimed.plan == plan and claimed.kind == "instruction"
    with pytest.raises(NotFound):
        gate.claim(cid, "deny")
    assert events.since(0)[-1].type == "confirm_resolved"
    results = denied_results(claimed.plan, claimed.risky())
    assert {r["code"] for r in results.values()} == {"denied_by_user"}
    assert (
        "DROP TABLE t" in results["step_1"]["error"]
        and "另一步" in results["step_2"]["error"]
    )


def test_questions_in_english_for_an_english_reader(tmp_path: Path) -> None:
    """The session's language (the pipeline passes it) writes the sentences, the
    question and a refusal's reasons; Chinese stays as it was."""
    rules = policy(tmp_path, ask=True)
    work = tmp_path / "w"
    work.mkdir()
    (work / "notes.txt").write_text("mine")
    plan = [
        {
            "step_id": 1,
            "tool": "process_start",
            "args": {"cmd": "python3 serve.py", "background": True},
        },
        {"step_id": 2, "tool": "db_query", "args": {"dsn": "d.db", "sql": "DROP TABLE t"}},
        {"step_id": 3, "tool": "shell_exec", "args": {"cmd": "wc -l notes.txt"}},
        {"step_id": 4, "tool": "file_write", "args": {"path": "notes.txt", "content": "x"}},
        {
            "step_id": 5,
            "tool": "file_write",
            "args": {"path": "{{step_1.result}}", "content": "x"},
        },
        {"step_id": 6, "tool": "file_read", "args": {"path": "x"}},
    ]
    english = [s.sentence for s in rules.review("app", work, plan, language="en-US").risky]
    assert english == [
        "start the program in the background: python3 serve.py",
        "change the database d.db: DROP TABLE t",
        "run a command outside the whitelist: wc -l notes.txt",
        "overwrite the existing file workspace/notes.txt (4 bytes now, 1 characters new)",
        "write a file named only when the plan runs: {{step_1.result}}",
    ]
    chinese = [s.sentence for s in rules.review("app", work, plan).risky]
    assert chinese[:2] == [
        "在后台启动程序：python3 serve.py",
        "修改数据库 d.db：DROP TABLE t",
    ]
    assert chinese[3] == "覆盖已有文件 workspace/notes.txt（原有 4 字节，新内容 1 个字符）"

    gate = ConfirmationGate(tmp_path / "confirmations", EventBus())
    risky = rules.review("app", work, plan[1:2], language="en-US").risky
    reply = gate.pause(
        app_id="app",
        app_name="Notes",
        session_id="sess_abcd",
        plan=plan[1:2],
        risky=risky,
        round_no=1,
        task_id="t1",
        instruction="drop it",
        action_request=None,
        upstream=None,
        language="en-US",
    )
    summary = 'The app "Notes" wants to change the database d.db: DROP TABLE t'
    assert reply.data["summary"] == summary
    assert reply.message == f"Please confirm: {summary}"
    refused = denied_results(plan[:2], risky, "en-US")
    assert refused["step_2"]["error"] == (
        "The user refused this step: change the database d.db: DROP TABLE t"
    )
    assert refused["step_1"]["error"] == (
        "Not run: the user refused another step of the same plan"
    )


def test_a_folder_import_asks_saying_how_many_files_from_where(tmp_path: Path) -> None:
    """The yes is to a question naming what will be copied."""
    from tests.fakes.music_api import make_wav

    music = tmp_path / "Music"
    music.mkdir()
    for name in ("a.wav", "b.wav"):
        (music / name).write_bytes(make_wav(0.5))  # 4 kB each
    (music / "notes.mp3").write_text("not a song")
    rules = policy(tmp_path)
    plan = [
        {
            "step_id": 1,
            "tool": "file_import",
            "args": {"source": str(music), "dest": "music"},
        }
    ]
    asked = rules.review("music_app", tmp_path, plan)
    assert kinds(asked) == ["requires_confirmation"]
    assert asked.risky[0].sentence == (
        f"从 {music} 复制 2 个音频文件（共 8 KB）到这个应用的 music 文件夹"
    )
    english = rules.review("music_app", tmp_path, plan, language="en-US")
    assert english.risky[0].sentence == (
        f"copy 2 audio files (8 KB) from {music} into this app's music folder"
    )
    plan[0]["args"]["source"] = str(tmp_path / "nowhere")
    missing = rules.review("music_app", tmp_path, plan, language="en-US")
    assert "no such folder" in missing.risky[0].sentence


def asking_tool(name: str, provider: str, description: str) -> ToolInfo:
    """A tool of `provider` whose entry says it asks the user first."""
    return ToolInfo(
        name=name,
        description=description,
        provider=provider,
        input_schema={"type": "object"},
        risk_level="system",
        requires_confirmation=True,
        concurrency_safe=False,
        max_result_size_chars=1000,
    )


INSTALL_DESCRIPTION = "Install a skill file or folder of the app's workspace"
INSTALL_WORDS = {
    "zh-CN": (
        "安装技能“desk.md”：装好后每个应用都能使用它",
        "需要你的确认：应用「技能」将要安装技能“desk.md”：装好后每个应用都能使用它",
        "使用外部服务「notes」的一个工具（它做什么，见技术细节）",
        "使用一个运行前要先问你的工具（它做什么，见技术细节）",
    ),
    "en-US": (
        'install the skill "desk.md": every app can use it once it is installed',
        'Please confirm: The app "Skills" wants to install the skill "desk.md": '
        "every app can use it once it is installed",
        'use a tool of the outside service "notes" (what it does is in the technical '
        "details)",
        "use a tool that asks before it runs (what it does is in the technical details)",
    ),
}


@pytest.mark.parametrize("language", list(INSTALL_WORDS))
def test_a_tool_that_asks_first_is_said_in_the_readers_words(
    tmp_path: Path, language: str
) -> None:
    """Installing a skill reads as a plain sentence in the reader's language, not as
    "使用工具 install_skill（system，来自 skills）：Install a skill file…": the tool's
    id, risk, provider and English description are the technical detail. The task's
    answer while it waits is a question (notice info), never a success."""
    step, message, outside, general = INSTALL_WORDS[language]
    tools = [
        asking_tool("install_skill", "skills", INSTALL_DESCRIPTION),
        asking_tool("notes__delete", "mcp:notes", "Delete a note by id"),
        asking_tool("frobnicate", "app:lab", "Frobnicate the widgets"),
    ]
    rules = PermissionPolicy(
        tmp_path / "permissions.json", Settings, tool_entries=lambda app_id: tools
    )
    plan = [
        {"step_id": 1, "tool": "install_skill", "args": {"path": "desk.md"}},
        {"step_id": 2, "tool": "notes__delete", "args": {"id": 3}},
        {"step_id": 3, "tool": "frobnicate", "args": {}},
    ]
    risky = rules.review("skills_app", tmp_path, plan, language=language).risky
    assert [s.sentence for s in risky] == [step, outside, general]
    for said, tool in zip(risky, tools, strict=True):
        for technical in (tool.name, tool.description, tool.provider, "system"):
            assert technical not in said.sentence, (technical, said.sentence)
            assert said.detail is not None and technical in said.detail
    gate = ConfirmationGate(tmp_path / "confirmations", EventBus())
    reply = gate.pause(
        app_id="skills_app",
        app_name="技能" if language == "zh-CN" else "Skills",
        session_id="sess_abcd",
        plan=plan[:1],
        risky=risky[:1],
        round_no=1,
        task_id="t1",
        instruction="install desk.md",
        action_request=None,
        upstream=None,
        language=language,
    )
    assert reply.message == message
    assert reply.status == "ok" and reply.notice == "info"  # a question: no ✅
    assert reply.detail == f"install_skill (system, skills): {INSTALL_DESCRIPTION}"
    (shown,) = reply.data["steps"]
    assert shown["sentence"] == step and "install_skill" in shown["detail"]
    # a question stored before steps had details still reads back
    stored = {k: v for k, v in shown.items() if k != "detail"}
    assert RiskyStep(**stored).detail is None
