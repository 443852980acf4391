"""The Python side of the desktop without a display: backend choice, the Qt-as-root
environment, the refusal without a display, and `desktop_app.py`'s arguments."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop import desktop_app, window


def test_forced_backend_is_used_and_a_bad_one_refused():
    assert window.choose_backend({"AIOS_WEBVIEW_GUI": "qt"}) == "qt"
    assert window.choose_backend({"AIOS_WEBVIEW_GUI": " GTK "}) == "gtk"
    with pytest.raises(window.WindowUnavailable, match="use 'gtk' or 'qt'"):
        window.choose_backend({"AIOS_WEBVIEW_GUI": "cocoa"})


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_qt_as_root_gets_no_sandbox_once():
    env = {"QTWEBENGINE_CHROMIUM_FLAGS": "--disable-gpu"}
    window.prepare_environment("qt", env)
    window.prepare_environment("qt", env)
    assert env["QTWEBENGINE_CHROMIUM_FLAGS"] == "--disable-gpu --no-sandbox"
    gtk_env: dict[str, str] = {}
    window.prepare_environment("gtk", gtk_env)
    assert gtk_env == {}


def test_no_display_is_a_clear_refusal(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(window.WindowUnavailable, match="no display"):
        window.run_window("http://127.0.0.1:1/")
    assert window.main(["http://127.0.0.1:1/"]) == 1


def test_desktop_app_starts_like_aios_start_with_the_repository_files(tmp_path: Path):
    for name in ("config.json", "ports.json"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "apps").mkdir()
    args = desktop_app.start_arguments(["--browser"], root=tmp_path)
    assert args == [
        "start",
        "--browser",
        "--config",
        str(tmp_path / "config.json"),
        "--apps-dir",
        str(tmp_path / "apps"),
        "--ports",
        str(tmp_path / "ports.json"),
    ]
    given = desktop_app.start_arguments(["--ports=auto", "--apps-dir", "x"], root=tmp_path)
    assert given == [
        "start",
        "--ports=auto",
        "--apps-dir",
        "x",
        "--config",
        str(tmp_path / "config.json"),
    ]
