"""config.json as a model: spec defaults, env overrides, errors naming the key, atomic save."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aios_protocol.errors import InvalidRequest
from aios_runtime.files import set_aside, state_problems
from aios_runtime.settings import (
    load_settings,
    load_settings_or_set_aside,
    save_user_settings,
    saved_keys,
    user_settings_path,
)

ROOT = Path(__file__).resolve().parents[2]


def test_shipped_config_has_the_spec_keys_and_defaults() -> None:
    raw = json.loads((ROOT / "config.json").read_text(encoding="utf-8"))
    assert raw["deepseek_api_key"] == ""
    assert raw["default_voice"] == "zh-CN"
    assert raw["voice_rate"] == 0.9
    assert raw["tool_timeout"] == {"http_request": 30, "shell_exec": 60, "file_read": 5}
    assert raw["tool_sandbox"] == {
        "enable_shell_whitelist": True,
        "shell_whitelist": ["ls", "cat", "echo", "python3"],
        "http_domain_whitelist": [],
    }
    settings = load_settings(ROOT / "config.json", env={})
    assert settings.timeout_for("shell_exec") == 60
    assert settings.timeout_for("cache_get") == settings.default_tool_timeout


def test_shipped_ports_map() -> None:
    ports = json.loads((ROOT / "ports.json").read_text(encoding="utf-8"))
    assert ports == {
        "controller": 5000,
        "executor": 5050,
        "music_app": 5001,
        "code_app": 5002,
        "hello_app": 5003,
        "system_agent": 5100,
    }


def test_missing_file_gives_defaults_and_env_overrides_secrets(tmp_path: Path) -> None:
    settings = load_settings(
        tmp_path / "none.json",
        env={
            "DEEPSEEK_API_KEY": "sk-test",
            "AIOS_LLM_BASE_URL": "http://127.0.0.1:9/v1",
            "AIOS_LLM_MODEL": "m",
        },
    )
    assert settings.deepseek_api_key == "sk-test"
    assert settings.llm_base_url == "http://127.0.0.1:9/v1"
    assert settings.llm_model == "m"


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"voice_rate": -1}, "voice_rate"),
        ({"tool_timeout": {"shell_exec": 0}}, "tool_timeout.shell_exec"),
        ({"tool_sandbox": {"shell_whitelist": "ls"}}, "tool_sandbox.shell_whitelist"),
    ],
)
def test_bad_values_name_the_key(tmp_path: Path, raw: dict, key: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(InvalidRequest, match=key.replace(".", r"\.")):
        load_settings(path, env={})


def test_not_json_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidRequest, match="not valid JSON"):
        load_settings(path, env={})


def test_the_users_settings_go_over_config_json_which_is_never_rewritten(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps({"deepseek_api_key": "k", "voice_rate": 0.8, "custom": {"a": 1}}),
        encoding="utf-8",
    )
    before = config.read_bytes()
    user = user_settings_path(tmp_path / "state")
    user.parent.mkdir()
    settings = load_settings(config, env={}, user=user)
    settings.voice_rate = 1.2
    save_user_settings(settings, {"voice_rate"}, user)
    assert json.loads(user.read_text(encoding="utf-8")) == {"voice_rate": 1.2}
    assert [p.name for p in user.parent.iterdir()] == ["settings.json"]  # no temp file
    assert config.read_bytes() == before
    again = load_settings(config, env={}, user=user)
    assert again.voice_rate == 1.2 and again.deepseek_api_key == "k"
    assert again.model_dump()["custom"] == {"a": 1}
    assert saved_keys(user) == {"voice_rate"} and saved_keys(tmp_path / "none") == set()


def test_an_unreadable_user_settings_file_is_set_aside(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"voice_rate": 0.8}), encoding="utf-8")
    user = tmp_path / "settings.json"
    user.write_text("{cut short", encoding="utf-8")
    settings = load_settings_or_set_aside(config, env={}, user=user)
    assert settings.voice_rate == 0.8
    assert not user.exists()
    assert [p.name for p in tmp_path.glob("settings.json.corrupt-*")]


def test_the_problems_of_one_state_folder_leave_out_another_folders(tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for folder in (ours, theirs):
        folder.mkdir()
        (folder / "jobs.json").write_text("{cut short", encoding="utf-8")
        set_aside(folder / "jobs.json", "not valid JSON")
    config = tmp_path / "config.json"
    config.write_text("[]", encoding="utf-8")
    set_aside(config, "not a JSON object")
    mine = state_problems(ours, config)
    assert (
        len(mine) == 2 and str(ours / "jobs.json") in mine[0] and "config.json" in mine[1]
    )
    assert not any(str(theirs) in note for note in mine)
    assert {*mine, *state_problems(theirs)} <= set(state_problems())  # all, unfiltered
