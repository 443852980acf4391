"""Without processes: what the CLI prints reads as words for people.

`aios apps` labels its columns and says a port as a port (never a bare number beside
the status that reads like a process id); `aios say --help` shows no internal id.
"""

from __future__ import annotations

import re

import pytest

from aios.cli import apps_table, build_parser

APPS = [
    {
        "id": "hello_app",
        "name": "Hello小AI",
        "icon": "👋",
        "status": "running",
        "port": 8101,
    },
    {"id": "music_app", "name": "音乐应用", "icon": "🎵", "status": "idle"},
    {"id": "bad_app", "name": "bad_app", "status": "failed", "error": "no manifest"},
]


def test_aios_apps_labels_its_columns_and_says_the_port_as_a_port() -> None:
    lines = apps_table(APPS).splitlines()
    assert lines[0].split() == ["APP", "STATUS", "LISTENS", "ON", "NAME"]
    hello = lines[1]
    assert "port 8101" in hello and not re.search(r"running\s+8101", hello)
    assert "音乐应用" in lines[2] and "port" not in lines[2]
    assert lines[3].endswith("(no manifest)")
    # every column starts where its label does
    for label in ("STATUS", "LISTENS ON", "NAME"):
        start = lines[0].index(label)
        assert all(line[start - 2 : start] == "  " for line in lines[1:]), label


def test_aios_apps_names_each_app_in_the_settings_language() -> None:
    music = {**APPS[1], "names": {"en-US": "Music"}}
    assert "🎵 Music" in apps_table([music], "en-US")
    assert "🎵 音乐应用" in apps_table([music], "zh-CN")
    assert "🎵 音乐应用" in apps_table([music])  # no language known: its own name


def test_aios_say_help_names_no_internal_id(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["say", "--help"])
    shown = capsys.readouterr().out
    assert "SESSION" not in shown and "session id" not in shown
    assert not re.search(r"\b(sess|job|task)_\w+|\b[SF]-\d+", shown)
    assert "--session ID" in shown and "conversation" in shown
