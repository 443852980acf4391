"""The desktop's Install dialog in Chromium (Playwright), against a real system.

A refused zip shows the controller's message in the dialog; a good zip puts the
app on the taskbar without a reload; clicking its idle icon starts it (the window
says it is starting, then shows the app's answer); removing its folder takes the
icon away.
"""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.browser import CHROMIUM_ARGS
from tests.apps_at_scale.conftest import echo_copy, lazy_config
from tests.controller.system import ROOT, RunningSystem, launch
from tests.procs import CHROMIUM

pytestmark = [pytest.mark.browser, pytest.mark.slow]

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("install_dialog")
    apps = root / "apps"
    apps.mkdir()
    shutil.copytree(ROOT / "apps" / "hello_app", apps / "hello_app", ignore=_IGNORE)
    running = launch(root, apps, config=lazy_config())
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def page(system: RunningSystem) -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip("Debian's Chromium is not installed (scripts/install.sh --test)")
    errors: list[str] = []
    with playwright_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            desktop = browser.new_page(viewport={"width": 1280, "height": 800})
            desktop.on("pageerror", lambda exc: errors.append(str(exc)))
            desktop.goto(f"{system.url}/?token={system.token}")
            expect(desktop.locator("body")).to_have_attribute("data-ready", "true")
            yield desktop
        finally:
            browser.close()
    assert errors == [], errors


def _zip(folder: Path, top: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"{top}/{path.relative_to(folder).as_posix()}")
    return buffer.getvalue()


def _choose(page: object, name: str, data: bytes) -> None:
    page.set_input_files(
        "#install_file",
        files=[{"name": name, "mimeType": "application/zip", "buffer": data}],
    )
    page.click("#install_submit")


def test_install_dialog_refuses_then_installs_and_the_icon_starts_the_app(
    page: object, system: RunningSystem, tmp_path: Path
) -> None:
    hello = page.locator("#task_hello_app")
    expect(hello).to_have_attribute("data-status", "idle")

    source = echo_copy(tmp_path, "dialog_app", name="对话框应用", keywords=["对话框专用词"])
    (source / "manifest.json").write_text(json.dumps({"name": "x", "entry": "gone.py"}))
    page.click("#start_button")
    page.click("#start_menu [data-system-action=install]")
    expect(page.locator("#install_dialog")).to_be_visible()
    _choose(page, "dialog_app.zip", _zip(source, "dialog_app"))
    result = page.locator("#install_result")
    # the sentence of `install_refused` in the page's language (the browser's English
    # here; the settings name none, where the controller alone would say Chinese), the
    # why folded away
    expect(result).to_contain_text("Not installed: This app cannot be installed.")
    expect(result.locator("details")).to_contain_text("entry: file 'gone.py' not found")
    assert not (system.apps_dir / "dialog_app").exists()

    source = echo_copy(tmp_path / "good", "dialog_app", name="对话框应用")
    _choose(page, "dialog_app.zip", _zip(source, "dialog_app"))
    expect(page.locator("#install_dialog")).to_have_count(0)
    icon = page.locator("#task_dialog_app")
    expect(icon).to_have_attribute("data-status", "idle", timeout=5000)

    icon.click()  # the first use: the window says "starting" until the app answers
    window = page.locator(".window[data-app-id=dialog_app]")
    expect(window).to_contain_text("echo:", timeout=20000)
    expect(icon).to_have_attribute("data-status", "running", timeout=5000)
    assert system.apps()["dialog_app"]["status"] == "running"

    shutil.rmtree(system.apps_dir / "dialog_app")  # removed: off the taskbar
    expect(icon).to_have_count(0, timeout=5000)
