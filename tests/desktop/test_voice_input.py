"""The 🎤 button (S-90, S-92) against the real system: no usable path gives a readable
reason; the browser's own recognition sends its transcript as a voice instruction;
a recording made in the page goes to POST /api/voice as a WAV (Chromium's fake
microphone); and the page's WAV encoder writes a correct header and samples.
"""

from __future__ import annotations

import json
import re

import pytest
import requests
from playwright.sync_api import expect

from bench.browser import CHROMIUM_ARGS
from tests.desktop.conftest import desktop_url
from tests.procs import CHROMIUM

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NO_RECOGNITION = """
delete window.SpeechRecognition;
delete window.webkitSpeechRecognition;
Object.defineProperty(window, "webkitSpeechRecognition", { value: undefined });
Object.defineProperty(navigator, "mediaDevices", { value: undefined });
"""

FAKE_RECOGNITION = """
window.SpeechRecognition = class {
  start() {
    window.__recognitionLang = this.lang;
    setTimeout(() => this.onresult({ results: [[{ transcript: "画廊 展示 table" }]] }), 50);
  }
};
"""


@pytest.fixture
def browser_engine(system):
    """voice_engine "browser": the server recognises no Chinese and does not offer
    Google's service (in "auto" the 🎤 would first ask for the yes to it)."""
    before = system.get("/api/settings").json()["voice_engine"]
    headers = system.headers
    requests.put(
        f"{system.url}/api/settings",
        json={"voice_engine": "browser"},
        headers=headers,
        timeout=10,
    ).raise_for_status()
    yield
    requests.put(
        f"{system.url}/api/settings",
        json={"voice_engine": before},
        headers=headers,
        timeout=10,
    ).raise_for_status()


def fresh_page(browser, system, script: str):
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="zh-CN")
    page = context.new_page()
    page.add_init_script(script)
    page.goto(desktop_url(system))
    page.wait_for_selector("#task_gallery_app")
    return context, page


def test_without_any_recognition_the_button_says_why(browser, system, browser_engine):
    status = system.get("/api/voice/status").json()
    if status["microphone"]["available"]:
        pytest.skip("this machine has a server microphone: voice input is available")
    context, page = fresh_page(browser, system, NO_RECOGNITION)
    try:
        page.click("#mic_button")
        toast = page.locator(".toast", has_text="语音输入")
        expect(toast).to_contain_text("不可用")
        expect(page.locator("#mic_button")).not_to_have_class(re.compile(r"\blistening\b"))
    finally:
        context.close()


def test_browser_recognition_sends_a_voice_instruction(
    browser, system, shot, browser_engine
):
    status = system.get("/api/voice/status").json()
    if status["microphone"]["available"]:
        pytest.skip("this machine has a server microphone, which takes precedence")
    zh = next(lang for lang in status["languages"] if lang["lang"] == "zh-CN")
    if zh["available"]:
        pytest.skip("the server recognises zh-CN here, so the page records instead")
    context, page = fresh_page(browser, system, FAKE_RECOGNITION)
    try:
        with page.expect_request("**/api/instruction") as sent:
            page.click("#mic_button")
        assert json.loads(sent.value.post_data)["source"] == "voice"
        assert json.loads(sent.value.post_data)["text"] == "画廊 展示 table"
        assert page.evaluate("() => window.__recognitionLang") == "zh-CN"
        expect(page.locator("#win_gallery_app th")).to_have_text(["名称", "大小"])
        shot(page, "voice-table")
    finally:
        context.close()


# the microphone opens only half a second after it is asked for
SLOW_MICROPHONE = """
const open = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
navigator.mediaDevices.getUserMedia = (c) =>
  new Promise((resolve) => setTimeout(resolve, 500)).then(() => open(c));
"""


@pytest.fixture
def recording_page(browser, system):
    """A page of a second Chromium with a fake microphone, which records in the page:
    the server is made to say it can recognise zh-CN and has no microphone."""
    status = system.get("/api/voice/status").json()
    status["microphone"] = {"available": False, "reason": "test"}
    status["languages"] = [{"lang": "zh-CN", "available": True, "engines": ["test"]}]
    args = [
        *CHROMIUM_ARGS,
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
    ]
    chromium = browser.browser_type.launch(executable_path=str(CHROMIUM), args=args)
    try:
        page = chromium.new_page(locale="zh-CN")
        page.route("**/api/voice/status", lambda route: route.fulfill(json=status))
        yield page
    finally:
        chromium.close()


def test_page_recording_is_posted_as_a_wav(recording_page, system):
    page = recording_page
    page.goto(desktop_url(system))
    page.wait_for_selector("#task_gallery_app")
    page.click("#mic_button")
    # "recording" (and its toast asking to speak) only once sound is coming in
    expect(page.locator("#mic_button")).to_have_attribute("data-phase", "recording")
    expect(page.locator(".toast-title", has_text="🎤 正在录音")).to_have_count(1)
    page.wait_for_timeout(200)  # some fake microphone sound
    with page.expect_request(lambda r: "/api/voice?" in r.url) as sent:
        page.click("#mic_button")  # stop
    body = sent.value.post_data_buffer
    assert sent.value.headers["content-type"] == "audio/wav"
    assert body[:4] == b"RIFF" and body[8:12] == b"WAVE" and len(body) > 1000
    assert "lang=zh-CN" in sent.value.url
    # whatever the recogniser made of the beeps, the answer is shown
    answer = page.locator(".toast-title", has_text=re.compile("🎤 (语音输入|听到)"))
    expect(answer).to_have_count(1)
    expect(page.locator("#mic_button")).not_to_have_class(re.compile(r"\blistening\b"))


def test_a_recording_stopped_before_any_sound_sends_nothing(recording_page, system):
    page = recording_page
    page.add_init_script(SLOW_MICROPHONE)
    posted = []
    page.on("request", lambda r: posted.append(r.url) if "/api/voice?" in r.url else None)
    page.goto(desktop_url(system))
    page.wait_for_selector("#task_gallery_app")
    page.click("#mic_button")
    expect(page.locator("#mic_button")).to_have_attribute("data-phase", "starting")
    page.click("#mic_button")  # stop, while the microphone is still opening
    expect(page.locator(".toast-title", has_text="🎤 没有听清")).to_have_count(1)
    expect(page.locator("#mic_button")).not_to_have_attribute("data-phase", re.compile("."))
    expect(page.locator(".toast-title", has_text="🎤 正在录音")).to_have_count(0)
    page.wait_for_timeout(700)  # past the moment the microphone would have opened
    assert posted == []
    expect(page.locator("#mic_button")).not_to_have_class(re.compile(r"\blistening\b"))


def test_wav_encoder_writes_header_and_samples(browser, system):
    context, page = fresh_page(browser, system, "")
    try:
        encoded = page.evaluate(
            """async () => {
              const { encodeWav } = await import('/desktop/voice.js');
              const blob = encodeWav([new Float32Array([0, 0.5]), new Float32Array([-0.5, 1, 2])], 16000);
              return { type: blob.type, bytes: Array.from(new Uint8Array(await blob.arrayBuffer())) };
            }"""
        )
    finally:
        context.close()
    data = bytes(encoded["bytes"])
    assert encoded["type"] == "audio/wav"
    assert data[:4] == b"RIFF" and data[8:16] == b"WAVEfmt " and data[36:40] == b"data"
    assert int.from_bytes(data[24:28], "little") == 16000
    assert int.from_bytes(data[40:44], "little") == 10  # five 16-bit samples
    samples = [
        int.from_bytes(data[44 + 2 * i : 46 + 2 * i], "little", signed=True)
        for i in range(5)
    ]
    assert samples == [0, 16383, -16384, 32767, 32767]


NO_MICROPHONE = """
navigator.mediaDevices.getUserMedia = () =>
  Promise.reject(new DOMException("Requested device not found", "NotFoundError"));
"""


def test_no_microphone_is_said_in_plain_words(recording_page, system):
    """A machine with no microphone: the browser's own words stay folded away."""
    page = recording_page
    page.add_init_script(NO_MICROPHONE)
    page.goto(desktop_url(system))
    page.wait_for_selector("#task_gallery_app")
    page.click("#mic_button")
    toast = page.locator(".toast", has_text="语音输入")
    expect(toast.locator(".toast-body")).to_contain_text("找不到麦克风")
    expect(toast.locator(".toast-body")).not_to_contain_text("Requested device")
    expect(toast.locator("details pre")).to_contain_text("NotFoundError")
    expect(page.locator("#mic_button")).not_to_have_class(re.compile(r"\\blistening\\b"))
