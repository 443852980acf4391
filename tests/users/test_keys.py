"""`api_keys` entries bound to users: read, checked, masked and kept when echoed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aios_protocol.errors import InvalidRequest
from aios_runtime.settings import ApiKey, Settings
from controller.settings_store import SettingsStore


def test_a_bound_key_names_its_users_and_a_plain_one_any() -> None:
    settings = Settings.model_validate(
        {
            "api_keys": [
                "sk-plain-key-00001111",
                {"key": "sk-alice-key-2222", "user": "alice"},
                {"key": "sk-front-end-3333", "users": ["bob", "carol"]},
            ]
        }
    )
    plain, alice, front = settings.api_keys
    assert plain == "sk-plain-key-00001111"
    assert isinstance(alice, ApiKey) and alice.allowed() == ("alice",)
    assert isinstance(front, ApiKey) and front.allowed() == ("bob", "carol")


@pytest.mark.parametrize(
    "entry",
    [
        {"key": "sk-x-0000", "user": "../x"},
        {"key": "sk-x-0000"},
        {"key": "sk-x-0000", "user": "a", "users": ["b"]},
        {"key": "", "user": "a"},
        {"key": "sk-x-0000", "users": ["ok", "bad/id"]},
    ],
)
def test_a_bad_bound_key_is_a_clear_error(entry: dict) -> None:
    with pytest.raises(ValueError):
        Settings.model_validate({"api_keys": [entry]})


def test_bound_keys_are_masked_and_kept_when_the_page_sends_them_back(
    tmp_path: Path,
) -> None:
    raw = [
        "sk-plain-key-00001111",
        {"key": "sk-alice-key-2222", "user": "alice"},
    ]
    store = SettingsStore(
        tmp_path / "settings.json", Settings.model_validate({"api_keys": raw})
    )
    shown = store.masked()["api_keys"]
    assert shown[0] == "••••1111"
    assert shown[1]["key"] == "••••2222" and shown[1]["user"] == "alice"
    assert "sk-alice" not in json.dumps(store.masked())
    store.update({"api_keys": shown})
    kept = store.get().api_keys
    assert kept[0] == "sk-plain-key-00001111"
    assert isinstance(kept[1], ApiKey) and kept[1].key == "sk-alice-key-2222"
    with pytest.raises(InvalidRequest):
        store.update({"api_keys": [{"key": "sk-new-key-4444", "user": "a b"}]})
