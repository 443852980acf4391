"""A real browser for the tests of what a user sees: Debian's Chromium through
Playwright (never `playwright install`), and a desktop page loaded in it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

import pytest
import requests

from bench.browser import CHROMIUM_ARGS
from tests.procs import CHROMIUM


def launch_chromium() -> Iterator[Any]:
    """Yield a launched Chromium; skip (saying why) where Debian's Chromium is missing."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("Debian's Chromium is not installed (scripts/install.sh --test)")
    with sync_api.sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@contextlib.contextmanager
def desktop_page(
    browser: Any,
    system: Any,
    app_ids: Iterable[str],
    *,
    timeout_ms: int = 15000,
    locale: str = "zh-CN",
    keep_layout: bool = False,
) -> Iterator[Any]:
    """A fresh 1280×800 desktop page (a zh-CN browser unless `locale` says otherwise)
    showing every app's taskbar icon; fails the test on any uncaught script error.
    The layout the controller keeps for the user is reset first (what an earlier
    test changed is not this one's), unless `keep_layout`."""
    if not keep_layout:
        reset = requests.put(
            f"{system.url}/api/layout",
            json={},
            headers={"X-AIOS-Token": system.token},
            timeout=30,
        )
        assert reset.status_code == 200, reset.text
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale=locale)
    page = context.new_page()
    page.set_default_timeout(timeout_ms)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{system.url}/?token={system.token}")
    for app_id in app_ids:
        page.wait_for_selector(f"#task_{app_id}")
    try:
        yield page
    finally:
        context.close()
    assert errors == [], f"uncaught script errors on the desktop: {errors}"
