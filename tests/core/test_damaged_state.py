"""A damaged state file is said and kept, never silently dropped.

Each store of the state folder reads its files by one rule
(`aios_runtime.files.read_state` and `set_aside`): a file cut off, of zero bytes, of
the wrong JSON type or with invalid values is moved aside as `<name>.corrupt-<time>`
(its bytes as they were, never overwritten), named in `state_problems` (what
`/api/health` and the desktop show), and the store goes on with what it could read.
A damaged permissions file grants nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from aios_protocol.errors import InvalidRequest
from aios_runtime.files import read_state, set_aside, state_problems
from aios_runtime.settings import Settings, load_settings_or_set_aside
from controller.events import EventBus
from controller.permissions.confirmations import ConfirmationGate
from controller.permissions.policy import PermissionPolicy
from controller.sessions import SessionStore
from controller.user_settings import UserSettings
from executor.skills.scope import SkillScopes
from scheduler.store import JobStore

# each kind of damage, from the file's good text
DAMAGE: dict[str, Callable[[str], str]] = {
    "cut off": lambda good: good[: len(good) // 2],
    "zero bytes": lambda good: "",
    "wrong JSON type": lambda good: "[1, 2, 3]",
}


def _aside(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.corrupt-*"))


def _said_and_kept(path: Path, damaged: str, root: Path) -> None:
    """`path` was moved aside whole and is named once among the problems."""
    copies = _aside(path)
    assert len(copies) == 1, copies
    assert copies[0].read_text(encoding="utf-8") == damaged
    assert [p for p in state_problems(root) if str(path) in p], state_problems(root)


# ------------------------------------------------------------------ permissions

STEP = {"step_id": 1, "tool": "process_start", "args": {"command": "python3 -V"}}
PERMISSIONS_INVALID = {
    "invalid values": '{"always": [{"app_id": "code_app", "tool": 7}], "own_files": {}}',
    "an unknown rule": '{"always": ["process_start"], "own_files": {}}',
    "own files not lists": '{"always": [], "own_files": {"code_app": "b.txt"}}',
}


def _permissions(tmp_path: Path) -> tuple[Path, str]:
    """A permissions file that allows code_app's process_start always."""
    settings = Settings()
    path = tmp_path / "permissions.json"
    policy = PermissionPolicy(path, lambda: settings)
    policy.remember("code_app", policy.review("code_app", tmp_path, [STEP]).risky)
    again = PermissionPolicy(path, lambda: settings)
    assert not again.review("code_app", tmp_path, [STEP]).risky  # the choice is kept
    return path, path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "damaged",
    [*(pytest.param(f, id=k) for k, f in DAMAGE.items())]
    + [pytest.param(lambda _g, t=t: t, id=k) for k, t in PERMISSIONS_INVALID.items()],
)
def test_a_damaged_permissions_file_grants_nothing_and_is_kept(
    tmp_path: Path, damaged: Callable[[str], str]
) -> None:
    path, good = _permissions(tmp_path)
    text = damaged(good)
    path.write_text(text, encoding="utf-8")
    settings = Settings()
    policy = PermissionPolicy(path, lambda: settings)
    asked = policy.review("code_app", tmp_path, [STEP]).risky
    assert [r.kind for r in asked] == ["process_start"]  # asks again
    _said_and_kept(path, text, tmp_path)
    policy.remember("code_app", asked)  # a new choice is saved beside the copy
    assert json.loads(path.read_text(encoding="utf-8"))["always"]
    assert len(_aside(path)) == 1


# ------------------------------------------------------------- a user's settings


@pytest.mark.parametrize(
    "damaged",
    [*(pytest.param(f, id=k) for k, f in DAMAGE.items())]
    + [pytest.param(lambda _g: '{"llm": {"api_key": 42}}', id="invalid values")],
)
def test_a_damaged_users_settings_file_is_kept_and_the_owners_serve(
    tmp_path: Path, damaged: Callable[[str], str]
) -> None:
    settings = Settings()
    users = UserSettings(tmp_path, lambda: settings)
    users.put("alice", {"llm": {"model": "alice-model"}})
    path = tmp_path / "users" / "alice" / "settings.json"
    text = damaged(path.read_text(encoding="utf-8"))
    path.write_text(text, encoding="utf-8")
    assert users.get("alice")["llm"] == {}
    assert users.client_for("alice") is None  # the owner's model serves
    _said_and_kept(path, text, tmp_path)
    users.put("alice", {"llm": {"model": "again"}})
    assert users.get("alice")["llm"] == {"model": "again"}


# ------------------------------------------------------------ a session journal


def _journal(tmp_path: Path) -> tuple[SessionStore, Path]:
    store = SessionStore(tmp_path / "sessions")
    for text in ("第一句", "第二句", "第三句"):
        with store.edit("sess_damaged01") as turn:
            turn.add_turn("user", text)
    return store, tmp_path / "sessions" / "sess_damaged01.json"


def _history(store: SessionStore) -> list[str]:
    session = store.get("sess_damaged01")
    assert session is not None
    return [entry["text"] for entry in session.history]


def test_a_journal_cut_in_the_middle_goes_on_from_what_was_read(tmp_path: Path) -> None:
    _store, path = _journal(tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) >= 3, lines  # a snapshot and a delta per later request
    text = "".join([*lines[:-2], lines[-2][:9] + "\n", lines[-1]])
    path.write_text(text, encoding="utf-8")
    store = SessionStore(tmp_path / "sessions")
    read = _history(store)
    assert read and read == ["第一句", "第二句", "第三句"][: len(read)]
    _said_and_kept(path, text, tmp_path)
    # what was read is the session's file now, and the next request adds to it
    with store.edit("sess_damaged01") as turn:
        turn.add_turn("user", "第四句")
    assert _history(SessionStore(tmp_path / "sessions")) == [*read, "第四句"]


@pytest.mark.parametrize("damaged", [pytest.param(f, id=k) for k, f in DAMAGE.items()])
def test_an_unreadable_session_is_kept_and_a_fresh_one_starts(
    tmp_path: Path, damaged: Callable[[str], str]
) -> None:
    _store, path = _journal(tmp_path)
    text = damaged(path.read_text(encoding="utf-8").splitlines()[0])
    path.write_text(text, encoding="utf-8")
    store = SessionStore(tmp_path / "sessions")
    assert store.get("sess_damaged01") is None
    _said_and_kept(path, text, tmp_path)


# ------------------------------------------------------- skill scopes and jobs


@pytest.mark.parametrize(
    "damaged",
    [*(pytest.param(f, id=k) for k, f in DAMAGE.items())]
    + [pytest.param(lambda _g: '[{"app_id": "a"}]', id="invalid values")],
)
def test_damaged_skill_scopes_are_kept(
    tmp_path: Path, damaged: Callable[[str], str]
) -> None:
    path = tmp_path / "skill_scopes.json"
    path.write_text(
        damaged(
            '[{"app_id": "a", "session_id": "s", "turn_id": "t", '
            '"skill": "k", "allowed": ["file_read"]}]'
        ),
        encoding="utf-8",
    )
    text = path.read_text(encoding="utf-8")
    SkillScopes(path)
    _said_and_kept(path, text, tmp_path)


@pytest.mark.parametrize(
    "damaged",
    [*(pytest.param(f, id=k) for k, f in DAMAGE.items())]
    + [pytest.param(lambda _g: '{"jobs": [{"id": 5}]}', id="invalid values")],
)
def test_a_damaged_jobs_file_is_kept_and_named(
    tmp_path: Path, damaged: Callable[[str], str]
) -> None:
    path = tmp_path / "jobs.json"
    text = damaged('{"jobs": [\n{"id": "job_abc123", "name": "x"}\n]}')
    path.write_text(text, encoding="utf-8")
    store = JobStore(tmp_path)
    store.load()
    assert any("jobs.json" in p for p in store.problems)
    _said_and_kept(path, text, tmp_path)


# ------------------------------------------------------------------ the rule


def test_a_file_that_cannot_be_read_now_is_named_and_left_in_place(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "a-folder.json"
    folder.mkdir()  # reading it is an OSError, not damage
    assert read_state(folder, json.loads, "a test file") is None
    assert folder.is_dir() and not _aside(folder)
    assert [p for p in state_problems(tmp_path) if "cannot be read now" in p]


def test_a_second_damage_never_overwrites_the_first_copy(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    for text in ("first", "second"):
        path.write_text(text, encoding="utf-8")
        set_aside(path, "test")
    assert sorted(p.read_text() for p in _aside(path)) == ["first", "second"]


# ------------------------------------------------------- the desktop's settings


@pytest.mark.parametrize(
    "damaged",
    [*(pytest.param(f, id=k) for k, f in DAMAGE.items())]
    + [pytest.param(lambda _g: '{"app_timeout": "soon"}', id="invalid values")],
)
def test_damaged_desktop_settings_are_kept_and_config_json_serves(
    tmp_path: Path, damaged: Callable[[str], str]
) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"app_timeout": 7}', encoding="utf-8")
    saved = tmp_path / "state" / "settings.json"
    saved.parent.mkdir()
    text = damaged('{"app_timeout": 9, "voice_rate": 150}')
    saved.write_text(text, encoding="utf-8")
    settings = load_settings_or_set_aside(config, {}, user=saved)
    assert settings.app_timeout == 7
    _said_and_kept(saved, text, tmp_path)
    assert config.read_text(encoding="utf-8") == '{"app_timeout": 7}'


def test_a_bad_value_in_config_json_is_still_said_at_start(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"app_timeout": "soon"}', encoding="utf-8")
    saved = tmp_path / "settings.json"
    saved.write_text('{"voice_rate": 150}', encoding="utf-8")
    with pytest.raises(InvalidRequest):
        load_settings_or_set_aside(config, {}, user=saved)
    assert saved.exists() and not _aside(saved)  # the user's file was not at fault


# ------------------------------------------------------------ pending questions


@pytest.mark.parametrize(
    "damaged",
    [*(pytest.param(f, id=k) for k, f in DAMAGE.items())]
    + [pytest.param(lambda g: g.replace('"plan": []', '"plan": "x"'), id="invalid values")],
)
def test_a_damaged_question_is_kept_and_the_others_are_listed(
    tmp_path: Path, damaged: Callable[[str], str]
) -> None:
    gate = ConfirmationGate(tmp_path / "confirmations", EventBus())
    for app in ("app_a", "app_b"):
        gate.pause(
            app_id=app,
            app_name=app,
            session_id="sess_q1",
            plan=[],
            risky=[],
            round_no=1,
            task_id=None,
            instruction="x",
            action_request=None,
            upstream=None,
        )
    first, second = sorted((tmp_path / "confirmations").glob("conf_*.json"))
    text = damaged(first.read_text(encoding="utf-8"))
    first.write_text(text, encoding="utf-8")
    assert len(gate.pending()) == 1  # the readable one
    _said_and_kept(first, text, tmp_path)
    assert second.exists()
