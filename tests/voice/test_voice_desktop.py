"""Voice in Chinese on the desktop, in Chromium at 1280×800 against the
real system, whose `voice_google_url` points at a local fake of Google's speech
service: Settings says which engine serves each language, in the reader's language;
the 🎤 asks once before a recording goes to Google (a no sends nothing); and the
voice language follows the desktop's language unless the user picked one.
"""

from __future__ import annotations

import copy
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from bench.browser import CHROMIUM_ARGS
from tests.browser import desktop_page
from tests.controller.system import TEST_CONFIG, RunningSystem, serving
from tests.fakes.google_speech import FakeGoogleSpeech
from tests.procs import CHROMIUM, ROOT
from tests.voice.conftest import GOOGLE_HEARD as HEARD

pytestmark = [pytest.mark.browser, pytest.mark.slow]

APP_IDS = ("hello_app", "system_agent")
SHOTS = ROOT / "test-artifacts" / "voice"


@pytest.fixture(scope="module")
def system(
    tmp_path_factory: pytest.TempPathFactory, google_service: FakeGoogleSpeech
) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("voice_desktop")
    apps = root / "apps"
    apps.mkdir()
    for app_id in APP_IDS:
        shutil.copytree(ROOT / "apps" / app_id, apps / app_id)
    config = {**copy.deepcopy(TEST_CONFIG), "voice_google_url": google_service.url}
    with serving(root, apps, APP_IDS, config=config) as running:
        yield running


@pytest.fixture(autouse=True)
def fresh_voice_settings(system: RunningSystem, google: FakeGoogleSpeech) -> None:
    """Each test starts without the yes, following the desktop's language."""
    put(
        system,
        {"voice_google_consent": False, "voice_follows_desktop": True, "ui_language": ""},
    )


def put(system: RunningSystem, changes: dict[str, Any]) -> dict[str, Any]:
    import requests

    answer = requests.put(
        f"{system.url}/api/settings", json=changes, headers=system.headers, timeout=10
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def shot(page: Any, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


@pytest.fixture
def microphone_browser(browser: Any) -> Iterator[Any]:
    """A second Chromium with a fake microphone (the page records, as a person's would)."""
    args = [
        *CHROMIUM_ARGS,
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
    ]
    chromium = browser.browser_type.launch(executable_path=str(CHROMIUM), args=args)
    try:
        yield chromium
    finally:
        chromium.close()


def open_desktop(chromium: Any, system: RunningSystem, locale: str) -> Any:
    page = chromium.new_page(viewport={"width": 1280, "height": 800}, locale=locale)
    page.goto(f"{system.url}/?token={system.token}")
    for app_id in APP_IDS:
        page.wait_for_selector(f"#task_{app_id}")
    return page


def open_settings(page: Any) -> None:
    page.click("#start_button")
    page.click("#start_menu [data-system-action=settings]")
    expect(page.locator("#settings_dialog")).to_be_visible()


def engine_line(page: Any, lang: str) -> Any:
    return page.locator(f"#settings_voice_engines li[data-lang='{lang}']")


# ------------------------------------------------------------------ Settings


@pytest.mark.parametrize(
    ("locale", "waiting", "sent", "offline"),
    [
        ("zh-CN", "需要你在下面允许", "录音经互联网发送到 Google", "本机离线识别"),
        (
            "en-US",
            "once you allow it below",
            "the recording goes to Google",
            "Offline on this computer",
        ),
    ],
)
def test_settings_say_which_engine_serves_each_language(
    browser: Any, system: RunningSystem, locale: str, waiting: str, sent: str, offline: str
) -> None:
    with desktop_page(browser, system, APP_IDS, locale=locale) as page:
        open_settings(page)
        expect(engine_line(page, "zh-CN")).to_contain_text(waiting)
        expect(engine_line(page, "en-US")).to_contain_text(offline)
        page.locator("#settings_voice_engines").scroll_into_view_if_needed()
        shot(page, f"settings-{locale}")
        page.check("#settings_voice_google_consent")
        expect(engine_line(page, "zh-CN")).to_contain_text(sent)
        shot(page, f"settings-{locale}-allowed")
        expect(engine_line(page, "en-US")).to_contain_text(offline)
        # one language on the screen: no Chinese in the English panel, and back
        text = page.locator("#settings_voice_engines").inner_text()
        if locale == "en-US":
            assert not re.search(r"[\u4e00-\u9fff]", text), text
        else:
            assert "Google" in text and "recording" not in text
        with page.expect_response("**/api/settings") as saved:
            page.click("#settings_save")
        assert saved.value.status == 200
    assert system.get("/api/settings").json()["voice_google_consent"] is True


# ------------------------------------------------------------------ the 🎤's yes


def test_the_microphone_asks_once_then_chinese_goes_to_google(
    microphone_browser: Any, system: RunningSystem, google: FakeGoogleSpeech
) -> None:
    page = open_desktop(microphone_browser, system, "zh-CN")
    page.click("#mic_button")
    dialog = page.locator("#voice_consent_dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("经互联网发送到 Google 的语音识别服务")
    expect(page.locator("#voice_consent_no")).to_be_focused()  # the safe choice
    shot(page, "consent-zh-CN")
    assert google.requests == []
    page.click("#voice_consent_yes")
    expect(page.locator("#mic_button")).to_have_attribute("data-phase", "recording")
    assert system.get("/api/settings").json()["voice_google_consent"] is True
    page.wait_for_timeout(300)  # some fake microphone sound
    with page.expect_response(lambda r: "/api/voice?" in r.url) as answered:
        page.click("#mic_button")  # stop
    assert answered.value.status == 200, answered.value.text()
    expect(page.locator(".toast", has_text="🎤 听到")).to_contain_text(HEARD)
    (sent,) = google.requests
    assert sent["lang"] == "zh-CN" and sent["body"][:4] == b"fLaC"
    # asked once: the next press records at once
    page.click("#mic_button")
    expect(page.locator("#mic_button")).to_have_attribute("data-phase", "recording")
    expect(dialog).to_have_count(0)
    page.click("#mic_button")


def test_a_no_sends_nothing_and_says_so(
    microphone_browser: Any, system: RunningSystem, google: FakeGoogleSpeech
) -> None:
    page = open_desktop(microphone_browser, system, "zh-CN")
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.url) if "/api/voice?" in r.url else None)
    page.click("#mic_button")
    page.click("#voice_consent_no")
    toast = page.locator(".toast", has_text="🎤 语音输入不可用")
    expect(toast).to_contain_text("没有录音，也没有发送任何声音")
    expect(page.locator("#mic_button")).not_to_have_attribute("data-phase", re.compile("."))
    assert posted == [] and google.requests == []
    assert system.get("/api/settings").json()["voice_google_consent"] is False


def test_the_english_desktop_asks_in_english_for_a_chinese_voice(
    microphone_browser: Any, system: RunningSystem, google: FakeGoogleSpeech
) -> None:
    put(system, {"default_voice": "zh-CN", "voice_follows_desktop": False})
    page = open_desktop(microphone_browser, system, "en-US")
    page.click("#mic_button")
    dialog = page.locator("#voice_consent_dialog")
    expect(dialog).to_contain_text(
        "sent over the internet to Google's speech recognition service"
    )
    assert not re.search(r"[\u4e00-\u9fff]", dialog.inner_text())
    shot(page, "consent-en-US")
    page.click("#voice_consent_no")
    expect(page.locator(".toast", has_text="Voice input not available")).to_contain_text(
        "Nothing was recorded or sent"
    )
    assert google.requests == []


# ------------------------------------------------------------------ which language


VOICE_LANG = "async () => (await import('/desktop/speech.js')).speech.lang"


def test_the_voice_language_follows_the_desktops_language(
    browser: Any, system: RunningSystem
) -> None:
    with desktop_page(browser, system, APP_IDS) as page:
        assert page.evaluate(VOICE_LANG) == "zh-CN"
        open_settings(page)
        expect(page.locator("#settings_voice")).to_have_value("")  # follows
        page.select_option("#settings_ui_language", "en-US")
        page.click("#settings_save")
        expect(page.locator("#settings_dialog")).to_have_count(0)
        assert page.evaluate(VOICE_LANG) == "en-US"
        assert system.get("/api/voice/status").json()["default_language"] == "en-US"
        # a voice the user picks stays when the desktop's language changes
        open_settings(page)
        page.select_option("#settings_voice", "zh-CN")
        page.select_option("#settings_ui_language", "")
        page.click("#settings_save")
        expect(page.locator("#settings_dialog")).to_have_count(0)
        assert page.evaluate(VOICE_LANG) == "zh-CN"
        put(system, {"ui_language": "en-US"})
        page.reload()
        page.wait_for_selector("#task_hello_app")
        assert page.evaluate(VOICE_LANG) == "zh-CN"
