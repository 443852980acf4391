"""config.json as a model: spec defaults, env overrides, errors naming the key, unknown
and old key names reported, atomic save."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from aios_protocol.errors import InvalidRequest
from aios_runtime.files import set_aside, state_problems
from aios_runtime.settings import (
    Settings,
    load_settings,
    load_settings_or_set_aside,
    save_user_settings,
    saved_keys,
    user_settings_path,
)

ROOT = Path(__file__).resolve().parents[2]


def test_shipped_config_has_the_spec_keys_and_defaults() -> None:
    raw = json.loads((ROOT / "config.json").read_text(encoding="utf-8"))
    assert raw["llm"]["api_key"] == ""  # the spec's deepseek_api_key, by its new name
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
    assert settings.config_warnings == []  # every key of the shipped file is known
    assert settings.llm.model == "deepseek-chat"


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
    assert settings.llm.api_key == "sk-test"
    assert settings.llm.base_url == "http://127.0.0.1:9/v1"
    assert settings.llm.model == "m"


def test_the_neutral_key_variable_wins_and_the_environment_beats_the_files(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"llm": {"api_key": "from-file"}}), encoding="utf-8")
    assert load_settings(config, env={}).llm.api_key == "from-file"
    old = {"DEEPSEEK_API_KEY": "sk-old"}
    assert load_settings(config, env=old).llm.api_key == "sk-old"
    both = {**old, "AIOS_LLM_API_KEY": "sk-new"}
    assert load_settings(config, env=both).llm.api_key == "sk-new"


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"voice_rate": -1}, "voice_rate"),
        ({"tool_timeout": {"shell_exec": 0}}, "tool_timeout.shell_exec"),
        ({"tool_sandbox": {"shell_whitelist": "ls"}}, "tool_sandbox.shell_whitelist"),
        ({"tool_sandbox": {"require_bubblewrap": "sometimes"}}, "tool_sandbox.require"),
        ({"llm": {"base_url": "ftp://example.com"}}, "llm.base_url"),
        ({"llm": {"model": " "}}, "llm.model"),
        ({"llm_base_url": "javascript:alert(1)"}, "llm.base_url"),  # the old name
        ({"supervisor": {"max_restarts": "many"}}, "supervisor.max_restarts"),
        ({"supervisor": {"backoff": []}}, "supervisor.backoff"),
        ({"apps": {"idle_stop_s": -1}}, "apps.idle_stop_s"),
        ({"app_sandbox": {"unconfined_apps": "x"}}, "app_sandbox.unconfined_apps"),
        ({"admission": {"queue_wait": 0}}, "admission.queue_wait"),
        ({"permissions": {"confirm": "maybe"}}, "permissions.confirm"),
        ({"openai_api": {"heartbeat_s": 0}}, "openai_api.heartbeat_s"),
        ({"app_timeout": "slow"}, "app_timeout"),
        ({"voice_engine": "siri"}, "voice_engine"),
        ({"voice_muted": "loud"}, "voice_muted"),
        ({"tool_sandbox": []}, "tool_sandbox"),
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
        json.dumps({"llm": {"api_key": "k"}, "voice_rate": 0.8, "custom": {"a": 1}}),
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
    assert again.voice_rate == 1.2 and again.llm.api_key == "k"
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


def _write(path: Path, raw: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def test_unknown_and_mistyped_keys_are_kept_logged_and_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = _write(
        tmp_path / "config.json",
        {
            "tool_sandbx": {"shell_whitelist": ["ls"]},
            "tool_sandbox": {"shell_whitelst": ["ls"], "ask_outside_whitelist": True},
            "supervisor": {"backof": [1]},
            "require_bubblewrap": True,  # a section's key written at the top
            "mcp_out": {},
        },
    )
    user = _write(tmp_path / "state" / "settings.json", {"limits": {"cpu_secs": 5}})
    with caplog.at_level(logging.WARNING, logger="aios.settings"):
        settings = load_settings_or_set_aside(config, env={}, user=user)
    assert settings.config_warnings == [
        f"{config}: unknown key tool_sandbx (did you mean tool_sandbox?)",
        f"{config}: unknown key require_bubblewrap "
        "(did you mean tool_sandbox.require_bubblewrap?)",
        f"{config}: unknown key tool_sandbox.shell_whitelst "
        "(did you mean tool_sandbox.shell_whitelist?)",
        f"{user}: unknown key limits.cpu_secs (did you mean limits.cpu_seconds?)",
        f"{config}: unknown key supervisor.backof (did you mean supervisor.backoff?)",
    ]
    assert [r.getMessage() for r in caplog.records] == settings.config_warnings
    # kept, never dropped: the values stay in the settings (and are written back)
    dumped = settings.model_dump()
    assert dumped["tool_sandbx"] == {"shell_whitelist": ["ls"]}
    assert dumped["tool_sandbox"]["shell_whitelst"] == ["ls"]
    # the known keys beside them still apply
    assert settings.tool_sandbox.ask_outside_whitelist is True
    assert settings.supervisor.backoff == (0.5, 1.0, 2.0, 4.0)


def test_the_old_llm_names_are_read_and_reported(tmp_path: Path) -> None:
    config = _write(
        tmp_path / "config.json",
        {
            "deepseek_api_key": "sk-old",
            "llm_base_url": "http://127.0.0.1:11434/v1",
            "llm_model": "llama3",
        },
    )
    settings = load_settings(config, env={})
    assert settings.llm.model_dump() == {
        "api_key": "sk-old",
        "base_url": "http://127.0.0.1:11434/v1",
        "model": "llama3",
    }
    assert settings.config_warnings == [
        f"{config}: {old} is the old name of llm.{new}: it is still read, write llm.{new}"
        for old, new in (
            ("deepseek_api_key", "api_key"),
            ("llm_base_url", "base_url"),
            ("llm_model", "model"),
        )
    ]
    # in code too (tests and tools still build Settings with them)
    assert Settings(deepseek_api_key="k", llm_model="m").llm.api_key == "k"


def test_with_both_names_the_new_one_wins(tmp_path: Path) -> None:
    config = _write(
        tmp_path / "config.json", {"deepseek_api_key": "old", "llm": {"api_key": "new"}}
    )
    settings = load_settings(config, env={})
    assert settings.llm.api_key == "new"
    assert settings.config_warnings == [
        f"{config}: deepseek_api_key is ignored: llm.api_key is set "
        "(write only llm.api_key)"
    ]


def test_a_key_saved_by_an_older_version_still_loads_over_config_json(
    tmp_path: Path,
) -> None:
    """The desktop of older versions saved `deepseek_api_key` at the top of
    `<state_dir>/settings.json`; it still goes over config.json's `llm`, whose other
    keys stay, and is saved under its new name the next time anything is saved."""
    config = _write(
        tmp_path / "config.json", {"llm": {"base_url": "http://127.0.0.1:9/v1"}}
    )
    user = _write(
        user_settings_path(tmp_path / "state"),
        {"deepseek_api_key": "sk-saved", "voice_rate": 1.1},
    )
    settings = load_settings(config, env={}, user=user)
    assert settings.llm.api_key == "sk-saved"
    assert settings.llm.base_url == "http://127.0.0.1:9/v1"
    assert saved_keys(user) == {"llm.api_key", "voice_rate"}
    settings.voice_rate = 1.3
    save_user_settings(settings, saved_keys(user), user)
    assert json.loads(user.read_text(encoding="utf-8")) == {
        "llm": {"api_key": "sk-saved"},
        "voice_rate": 1.3,
    }
    assert load_settings(config, env={}, user=user).config_warnings == []


def test_only_the_changed_keys_of_a_section_are_saved(tmp_path: Path) -> None:
    """A key given by the environment is never written to the user's file."""
    user = user_settings_path(tmp_path)
    settings = load_settings(None, env={"AIOS_LLM_API_KEY": "sk-env"})
    settings.llm.model = "other-model"
    save_user_settings(settings, {"llm.model"}, user)
    assert json.loads(user.read_text(encoding="utf-8")) == {"llm": {"model": "other-model"}}
    again = load_settings(None, env={}, user=user)
    assert again.llm.model == "other-model" and again.llm.api_key == ""


def test_a_readable_file_with_a_wrong_type_still_raises_naming_the_key(
    tmp_path: Path,
) -> None:
    config = _write(tmp_path / "config.json", {"apps": {"start_at_launch": "later"}})
    with pytest.raises(InvalidRequest, match=r"apps\.start_at_launch"):
        load_settings_or_set_aside(config, env={})
    assert config.exists()  # a bad value is the user's to fix, never set aside
