"""In Chromium: the settings form is validated by the
settings model and says why beside each field; turning the command whitelist off
needs a confirmation; a failed 🎤 says what happened, shows the server's message and
points to the speech engine fields the settings now have.
"""

from __future__ import annotations

import pytest
import requests
from playwright.sync_api import expect

from tests.desktop.conftest import desktop_url

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DENIED_RECOGNITION = """
window.SpeechRecognition = class {
  start() { setTimeout(() => this.onerror({ error: "not-allowed" }), 30); }
};
window.webkitSpeechRecognition = window.SpeechRecognition;
"""


def open_settings(page) -> None:
    page.click("#start_button")
    page.click("#start_menu [data-system-action=settings]")
    expect(page.locator("#settings_dialog")).to_be_visible()


def reason(page, field: str):
    return page.locator(f"#settings_dialog .settings-field-error[data-field='{field}']")


def test_the_api_rejects_bad_settings_naming_each_field(system):
    before = system.get("/api/settings").json()
    bad = {
        "llm": {"base_url": "javascript:alert(1)", "model": "  "},
        "tool_sandbox": {
            **before["tool_sandbox"],
            "http_domain_whitelist": ["http://bad domain/", "*"],
            "shell_whitelist": ["ls", "rm -rf /"],
        },
    }
    answer = requests.put(
        f"{system.url}/api/settings", json=bad, headers=system.headers, timeout=10
    )
    assert answer.status_code == 400
    fields = answer.json()["error"]["detail"]["fields"]
    assert set(fields) == {
        "llm.base_url",
        "llm.model",
        "tool_sandbox.http_domain_whitelist.0",
        "tool_sandbox.http_domain_whitelist.1",
        "tool_sandbox.shell_whitelist.1",
    }, fields
    assert system.get("/api/settings").json() == before


def test_the_form_says_why_beside_each_bad_field(page, system, shot):
    before = system.get("/api/settings").json()
    open_settings(page)
    page.fill("#settings_llm_base_url", "javascript:alert(1)")
    page.fill("#settings_llm_model", "")
    page.fill("#settings_http_whitelist", "http://bad domain/\n*")
    page.fill("#settings_shell_whitelist", "ls\nrm -rf /")
    with page.expect_response("**/api/settings") as saved:
        page.click("#settings_save")
    assert saved.value.status == 400
    expect(page.locator("#settings_dialog")).to_be_visible()
    expect(reason(page, "llm.base_url")).to_contain_text("http(s) URL")
    expect(reason(page, "llm.model")).to_be_visible()
    domains = reason(page, "tool_sandbox.http_domain_whitelist")
    expect(domains).to_contain_text("第1行")
    expect(domains).to_contain_text("第2行")
    expect(domains).to_contain_text("not a domain name")
    programs = reason(page, "tool_sandbox.shell_whitelist")
    expect(programs).to_contain_text("第2行")
    expect(programs).to_contain_text("rm -rf /")
    expect(page.locator("#settings_llm_base_url")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#settings_dialog .settings-error")).to_contain_text("标红")
    shot(page, "reasons")
    assert system.get("/api/settings").json() == before
    # corrected, the same form saves and the reasons go away
    page.fill("#settings_llm_base_url", before["llm"]["base_url"])
    page.fill("#settings_llm_model", before["llm"]["model"])
    page.fill(
        "#settings_http_whitelist",
        "\n".join(before["tool_sandbox"]["http_domain_whitelist"]),
    )
    page.fill(
        "#settings_shell_whitelist", "\n".join(before["tool_sandbox"]["shell_whitelist"])
    )
    with page.expect_response("**/api/settings") as saved:
        page.click("#settings_save")
    assert saved.value.status == 200
    expect(page.locator("#settings_dialog")).to_have_count(0)


def test_turning_the_whitelist_off_needs_a_confirmation(page, system, shot):
    before = system.get("/api/settings").json()
    assert before["tool_sandbox"]["enable_shell_whitelist"] is True
    open_settings(page)
    page.uncheck("#settings_shell_on")
    warning = page.locator("#settings_shell_warning")
    expect(warning).to_be_visible()
    expect(warning).to_contain_text("任何程序")
    puts: list[str] = []
    page.on("request", lambda r: puts.append(r.url) if r.method == "PUT" else None)
    page.click("#settings_save")
    expect(page.locator("#settings_dialog .settings-error")).to_contain_text("确认")
    assert puts == []
    assert system.get("/api/settings").json()["tool_sandbox"]["enable_shell_whitelist"]
    shot(page, "whitelist-off-warning")
    page.check("#settings_shell_off_confirm")
    with page.expect_response("**/api/settings") as saved:
        page.click("#settings_save")
    assert saved.value.status == 200
    assert (
        system.get("/api/settings").json()["tool_sandbox"]["enable_shell_whitelist"]
        is False
    )
    requests.put(
        f"{system.url}/api/settings",
        json={"tool_sandbox": before["tool_sandbox"]},
        headers=system.headers,
        timeout=10,
    ).raise_for_status()


def test_settings_have_the_speech_engine_fields(page, system):
    before = system.get("/api/settings").json()
    open_settings(page)
    page.select_option("#settings_voice_engine", "openai")
    page.fill("#settings_voice_api_base_url", "https://stt.example.com/v1")
    page.fill("#settings_voice_api_key", "sk-voice-test-987654321")
    with page.expect_response("**/api/settings") as saved:
        page.click("#settings_save")
    assert saved.value.status == 200
    stored = system.get("/api/settings").json()
    assert stored["voice_engine"] == "openai"
    assert stored["voice_api_base_url"] == "https://stt.example.com/v1"
    assert (
        stored["voice_api_key"].endswith("4321")
        and "sk-voice" not in stored["voice_api_key"]
    )
    open_settings(page)
    expect(page.locator("#settings_voice_engine")).to_have_value("openai")
    assert page.input_value("#settings_voice_api_key") == ""
    requests.put(
        f"{system.url}/api/settings",
        json={
            "voice_engine": before.get("voice_engine", "auto"),
            "voice_api_key": "",
            "voice_api_base_url": before.get(
                "voice_api_base_url", "https://api.openai.com/v1"
            ),
        },
        headers=system.headers,
        timeout=10,
    ).raise_for_status()


def test_a_refused_microphone_is_explained_with_the_servers_message(browser, system, shot):
    # "browser": no Google service to ask about first (see tests/voice/test_voice_desktop.py)
    before = system.get("/api/settings").json()["voice_engine"]
    requests.put(
        f"{system.url}/api/settings",
        json={"voice_engine": "browser"},
        headers=system.headers,
        timeout=10,
    ).raise_for_status()
    try:
        refused_microphone_is_explained(browser, system, shot)
    finally:
        requests.put(
            f"{system.url}/api/settings",
            json={"voice_engine": before},
            headers=system.headers,
            timeout=10,
        ).raise_for_status()


def refused_microphone_is_explained(browser, system, shot) -> None:
    status = system.get("/api/voice/status").json()
    if status["microphone"]["available"]:
        pytest.skip("this machine has a server microphone: the browser path is not used")
    zh = next(entry for entry in status["languages"] if entry["lang"] == "zh-CN")
    if zh["available"]:
        pytest.skip("the server recognises Chinese here: the browser path is not used")
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="zh-CN")
    context.add_init_script(DENIED_RECOGNITION)
    try:
        page = context.new_page()
        page.goto(desktop_url(system))
        page.wait_for_selector("#task_gallery_app")
        page.click("#mic_button")
        toast = page.locator(".toast", has_text="语音输入")
        expect(toast).to_contain_text("不允许本页使用麦克风")
        expect(toast).to_contain_text(zh["message"])
        expect(toast).to_contain_text("设置 → 语音识别引擎")
        expect(toast).not_to_contain_text("not-allowed")
        shot(page, "mic-explained")
    finally:
        context.close()
