"""What the journeys share: the real system with every shipped app, a fresh desktop
page per journey, and the steps a person takes on it.

`start_world` launches `aios start --headless` on copies of the shipped apps, with
the fake music catalogue on 127.0.0.1 (its previews are 20-second WAV files, long
enough to pause in the middle) and, when asked, the scripted OpenAI-compatible
model server; each test module starts one. A journey is a test parametrized over
`locale` ("zh-CN", "en-US"): its `journey` fixture is a fresh 1280×800 Chromium
context in that language (tests/browser.py `desktop_page`), whose `say` types an
instruction into #command_input and presses Enter, and whose `shot(step)` saves
`test-artifacts/journeys/<journey>-<lang>-<step>.png` after checking that the
screen speaks one language: no Chinese on the English desktop, no English sentence
or bracketed English gloss on the Chinese one.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
import requests
from playwright.sync_api import Locator, Page, expect

from tests.browser import desktop_page
from tests.controller.system import TEST_CONFIG, RunningSystem, copy_shipped_apps, serving
from tests.desktop.test_walkthrough_one_language import CJK, GLOSS
from tests.fakes.music_api import CATALOGUE, FakeMusicCatalogue, FakeSong, make_wav
from tests.fakes.openai_server import FakeOpenAI
from tests.procs import ROOT

T = TypeVar("T")
SHIPPED = (
    "assistant_app",
    "code_app",
    "hello_app",
    "music_app",
    "scheduler_app",
    "skills_app",
    "system_agent",
)
LOCALES = ("zh-CN", "en-US")
ARTIFACTS = ROOT / "test-artifacts" / "journeys"
# the English store's songs of the artist the design's example asks for
JAY_CHOU = (
    FakeSong(3001, "Sunny Day", "Jay Chou", "Ye Hui Mei", 269_000),
    FakeSong(3002, "Rice Field", "Jay Chou", "Capricorn", 223_000),
    FakeSong(3003, "Blue and White Porcelain", "Jay Chou", "On the Run", 239_000),
)

# the words a person reads on the page: its visible text (without code, program
# output and tables of process names when `wordsOnly`), and the tooltips, labels
# and placeholders of what is drawn
SCREEN_WORDS = """wordsOnly => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || !parent.getClientRects().length) continue;
    if (wordsOnly && parent.closest('pre, code, textarea, table, .v-code')) continue;
    out.push(node.textContent);
  }
  for (const node of document.querySelectorAll('[title], [aria-label], [placeholder]')) {
    if (!node.getClientRects().length) continue;
    for (const name of ['title', 'aria-label', 'placeholder']) {
      const value = node.getAttribute(name);
      if (value) out.push(value);
    }
  }
  return out.join('\\n');
}"""
# three English words in a row: a sentence left untranslated
ENGLISH_RUN = re.compile(r"\b[A-Za-z]{2,}(?: [A-Za-z]{2,}){2,}\b")
# a program's own error line, quoted as it said it ("ZeroDivisionError: division by zero")
PROGRAM_ERROR = re.compile(r"\b\w+(?:Error|Exception): [^\n]*")


@dataclass
class World:
    """The running system, its music catalogue and (for the assistant) its model."""

    system: RunningSystem
    catalogue: FakeMusicCatalogue
    model: FakeOpenAI | None = None

    def workspace(self, app_id: str) -> Path:
        return self.system.workspace(app_id)

    def jobs(self) -> dict[str, dict[str, Any]]:
        """The scheduler's jobs by name."""
        answer = self.system.get("/api/schedules")
        assert answer.status_code == 200, answer.text
        return {job["name"]: job for job in answer.json()["jobs"]}

    def clear_jobs(self) -> None:
        for job in self.jobs().values():
            requests.delete(
                f"{self.system.url}/api/schedules/{job['id']}",
                headers=self.system.headers,
                timeout=10,
            )

    def pending_confirmations(self) -> list[dict[str, Any]]:
        answer = self.system.get("/api/confirmations")
        assert answer.status_code == 200, answer.text
        return list(answer.json()["confirmations"])

    def settings(self) -> dict[str, Any]:
        answer = self.system.get("/api/settings")
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def put_settings(self, changes: dict[str, Any]) -> None:
        answer = requests.put(
            f"{self.system.url}/api/settings",
            json=changes,
            headers=self.system.headers,
            timeout=30,
        )
        assert answer.status_code == 200, answer.text


def start_world(
    factory: pytest.TempPathFactory, name: str, *, model: bool = False
) -> Iterator[World]:
    """The system with every shipped app (a module fixture: `yield from`)."""
    root = factory.mktemp(name)
    apps = copy_shipped_apps(root / "apps", SHIPPED)
    catalogue = FakeMusicCatalogue(CATALOGUE + JAY_CHOU)
    with catalogue, FakeOpenAI() if model else contextlib.nullcontext() as fake:
        catalogue.preview = make_wav(20.0)  # long enough to pause in the middle
        config = copy.deepcopy(TEST_CONFIG)
        config["tool_sandbox"] = {"http_allow_private_hosts": ["127.0.0.1"]}
        config["app_settings"] = {"music_app": {"api_base": catalogue.base_url}}
        if model:
            config.update(deepseek_api_key="sk-journeys", llm_base_url=fake.base_url)
        with serving(root, apps, SHIPPED, config=config) as running:
            yield World(running, catalogue, fake)


def one_language(page: Page, locale: str) -> list[str]:
    """What on the screen is not in the page's language."""
    if locale == "en-US":
        text = page.evaluate(SCREEN_WORDS, False)
        return sorted({line for line in text.splitlines() if CJK.search(line)})
    text = PROGRAM_ERROR.sub("", page.evaluate(SCREEN_WORDS, True))
    found = {m.group(0) for m in GLOSS.finditer(text)}
    found |= {m.group(0) for m in ENGLISH_RUN.finditer(text)}
    return sorted(found)


@dataclass
class Journey:
    """One journey: its page in one language, and the steps a person takes on it."""

    page: Page
    name: str
    locale: str
    world: World
    speaks: str = ""  # the language the desktop was switched to, if it was
    _cdp: Any = None

    @property
    def zh(self) -> bool:
        return self.locale == "zh-CN"

    def tr(self, zh: T, en: T) -> T:
        """What this journey's language says (its words, its song)."""
        return zh if self.zh else en

    def say(self, text: str) -> None:
        """Type `text` in the command bar and press Enter; returns once answered."""
        self.page.fill("#command_input", text)
        with self.page.expect_response(lambda r: r.url.endswith("/api/instruction")):
            self.page.press("#command_input", "Enter")

    def window(self, app_id: str) -> Locator:
        return self.page.locator(f"#win_{app_id}")

    def status(self, app_id: str) -> Locator:
        return self.window(app_id).locator(".win-status")

    def button(self, app_id: str, label: str) -> Locator:
        return self.window(app_id).get_by_role("button", name=label, exact=True)

    def audio(self, app_id: str = "music_app") -> Any:
        """The player's state: {src, paused, time} of the window's audio element."""
        return (
            self.window(app_id)
            .locator("audio")
            .evaluate(
                "a => ({src: a.getAttribute('src'), paused: a.paused, time: a.currentTime})"
            )
        )

    def wait_playing(self, past: float = 0.0) -> float:
        """Wait until the music window's audio plays past `past` seconds; its time."""
        self.page.wait_for_function(
            "past => { const a = document.querySelector('#win_music_app audio');"
            " return !!a && !a.paused && a.currentTime > past; }",
            arg=past,
        )
        return float(self.audio()["time"])

    def shot(self, step: str) -> Path:
        """Save this step's screenshot, once the screen speaks one language."""
        self.page.wait_for_function("() => document.getAnimations().length === 0")
        speaks = self.speaks or self.locale
        mixed = one_language(self.page, speaks)
        assert not mixed, f"{speaks} screen at step {step!r} shows: {mixed}"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{self.name}-{self.locale}-{step}.png"
        if self._cdp is None:
            self._cdp = self.page.context.new_cdp_session(self.page)
        # the encoder's fast setting: a third of Playwright's time for the same picture
        image = self._cdp.send(
            "Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True}
        )
        path.write_bytes(base64.b64decode(image["data"]))
        return path


@pytest.fixture
def journey(
    browser: Any, world: World, request: pytest.FixtureRequest
) -> Iterator[Journey]:
    """A fresh desktop page in the test's `locale`, named after the test."""
    locale = request.node.callspec.params["locale"]
    name = request.node.originalname.removeprefix("test_").replace("_", "-")
    with desktop_page(
        browser, world.system, SHIPPED, timeout_ms=15000, locale=locale
    ) as page:
        ready = "就绪" if locale == "zh-CN" else "Ready"
        expect(page.locator("#desktop_status")).to_have_text(ready)
        yield Journey(page, name, locale, world)
    left = world.pending_confirmations()
    for asked in left:  # answered, so that the next journey starts on a clear desktop
        world.system.post(
            f"/api/confirmations/{asked['confirmation_id']}", {"decision": "deny"}
        )
    assert left == [], f"the journey left questions unanswered: {left}"
