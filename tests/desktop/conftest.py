"""Fixtures of the desktop tests: the real system with the gallery app, and Chromium.

`system` starts `python -m aios start --headless --ports auto` (through the
controller tests' launcher) on an apps folder holding copies of the shipped
`hello_app` and `system_agent` and of `tests/desktop/apps/gallery_app`, and waits
until they all run.
`browser` is Debian's Chromium driven by Playwright (never `playwright install`);
`page` is a fresh desktop page per test that fails the test on any uncaught
script error, and `shot(page, name)` saves a screenshot under `test-artifacts/`.
"""

from __future__ import annotations

import copy
import re
import shutil
import struct
import wave
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.browser import desktop_page
from tests.controller.system import TEST_CONFIG, RunningSystem, serving
from tests.procs import ROOT

playwright_api = pytest.importorskip("playwright.sync_api")

HERE = Path(__file__).resolve().parent
ARTIFACTS = ROOT / "test-artifacts" / "desktop"
APP_IDS = ("gallery_app", "hello_app", "system_agent")
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


def write_tone(path: Path, seconds: float = 0.5, rate: int = 8000) -> None:
    """A short quiet square wave, so the media view has a real local file to load."""
    frames = b"".join(
        struct.pack("<h", 2000 if (i // 20) % 2 else -2000)
        for i in range(int(seconds * rate))
    )
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(frames)


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("desktop_system")
    apps = root / "apps"
    apps.mkdir()
    for shipped in ("hello_app", "system_agent"):
        shutil.copytree(ROOT / "apps" / shipped, apps / shipped, ignore=_IGNORE)
    shutil.copytree(HERE / "apps" / "gallery_app", apps / "gallery_app", ignore=_IGNORE)
    write_tone(apps / "gallery_app" / "workspace" / "tone.wav")
    with serving(root, apps, APP_IDS, config=copy.deepcopy(TEST_CONFIG)) as running:
        yield running


# counts the text views the page renders from now on (`window.__textViews`): a view
# that says what the one before said is still seen to come
COUNT_TEXT_VIEWS = """() => {
    window.__textViews = 0;
    new MutationObserver((records) => {
        for (const r of records) for (const n of r.addedNodes)
            if (n.nodeType === 1 && (n.matches(".v-text") || n.querySelector(".v-text")))
                window.__textViews += 1;
    }).observe(document.body, { childList: true, subtree: true });
}"""


def desktop_url(system: RunningSystem) -> str:
    return f"{system.url}/?token={system.token}"


@pytest.fixture
def page(browser, system: RunningSystem) -> Iterator[object]:
    """A fresh desktop page, loaded and showing every app's taskbar icon."""
    with desktop_page(browser, system, APP_IDS) as desktop:
        yield desktop


@pytest.fixture
def shot(request: pytest.FixtureRequest) -> Callable[[object, str], Path]:
    """`shot(page, name)` saves test-artifacts/desktop/<test>-<name>.png."""

    def take(target: object, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^\w.-]+", "_", request.node.name).strip("_")
        path = ARTIFACTS / f"{safe}-{name}.png"
        target.screenshot(path=str(path))
        return path

    return take
