"""Events the controller pushes to the desktop over SSE, against the real system:
`speak` spoken by the page when the controller has no sound player of its own (and
silenced by the tray's mute, which also reaches the controller), `ui_commands`
reaching a desktop that did not make the request, `app_status` showing an app
restarting on its taskbar icon after it was killed, and progress events that come
after the answer they belong to.
"""

from __future__ import annotations

import re

import psutil
import pytest
from playwright.sync_api import expect

from tests.desktop.conftest import COUNT_TEXT_VIEWS, desktop_url

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Replaces the browser's speech engine with a recorder (runs before the page's scripts).
RECORD_SPEECH = """
window.__spoken = [];
Object.defineProperty(window, "speechSynthesis", {
  configurable: true,
  value: { speak: (u) => window.__spoken.push(u.text), cancel: () => {} },
});
"""


# Holds every event of the stream `window.__sseDelay` ms (in order) once it is set.
LAGGING_STREAM = """
(() => {
  const Real = window.EventSource;
  window.__sseDelay = 0;
  window.EventSource = class extends Real {
    set onmessage(handler) {
      super.onmessage = (message) => {
        const delay = window.__sseDelay;
        if (delay) setTimeout(() => handler(message), delay);
        else handler(message);
      };
    }
  };
})();
"""


def spoken(page) -> list[str]:
    return page.evaluate("() => window.__spoken")


def open_gallery(page) -> None:
    page.click("#task_gallery_app")
    expect(page.locator("#win_gallery_app .v-text")).to_contain_text("画廊文本")


def speech_page(browser, system, server_player: str | None):
    """A desktop whose speech engine records, told the server's player is `server_player`."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="zh-CN")
    page = context.new_page()
    page.add_init_script(RECORD_SPEECH)
    status = {**system.get("/api/speech/status").json(), "player": server_player}
    page.route(
        "**/api/speech/status",
        lambda route: route.fulfill(json=status),
    )
    page.goto(desktop_url(system))
    page.wait_for_selector("#task_gallery_app")
    return context, page


def test_without_a_server_player_the_page_speaks_unless_muted(browser, system):
    context, page = speech_page(browser, system, None)
    try:
        page.wait_for_function("() => window.__spoken.includes('欢迎使用 Triton AIOS')")
        open_gallery(page)
        page.wait_for_function("() => window.__spoken.includes('画廊：text')")
        page.click("#tray_volume")  # mute
        page.click("#btn_show_list")
        expect(page.locator("#win_gallery_app .win-status")).to_have_text("画廊：list")
        page.click("#tray_volume")  # sound on again
        page.click("#btn_show_chart")
        # events arrive in order: once chart's was spoken, list's came (muted) before it
        page.wait_for_function("() => window.__spoken.includes('画廊：chart')")
        assert "画廊：list" not in spoken(page)
    finally:
        context.close()


def test_with_a_server_player_the_page_stays_quiet_and_mute_reaches_the_server(
    browser, system
):
    context, page = speech_page(browser, system, "aplay")
    try:
        open_gallery(page)
        page.click("#btn_show_chart")
        expect(page.locator("#win_gallery_app .win-status")).to_have_text("画廊：chart")
        with page.expect_response("**/api/speech/mute") as muted:
            page.click("#tray_volume")
        assert muted.value.json() == {"muted": True}
        assert system.get("/api/speech/mute").json() == {"muted": True}
        with page.expect_response("**/api/speech/mute"):
            page.click("#tray_volume")
        assert system.get("/api/speech/mute").json() == {"muted": False}
        assert spoken(page) == []
    finally:
        context.close()


def test_ui_commands_event_reaches_another_desktop(browser, system, page, shot):
    open_gallery(page)
    other = browser.new_context(viewport={"width": 1280, "height": 800}, locale="zh-CN")
    try:
        watcher = other.new_page()
        watcher.goto(desktop_url(system))
        open_gallery(watcher)
        page.click("#btn_ui_move")  # the reply goes to `page`; the event to both
        watcher.wait_for_function(
            "() => { const r = document.getElementById('btn_play')?.getBoundingClientRect();"
            " return r && Math.round(r.left) === 20 && Math.round(r.top) === 20; }"
        )
        shot(watcher, "moved-by-event")
    finally:
        other.close()


def test_killed_app_shows_restarting_then_running(page, system):
    icon = page.locator("#task_hello_app")
    expect(icon).to_have_attribute("data-status", "running")
    page.evaluate(
        """() => {
          window.__statuses = [];
          const icon = document.getElementById('task_hello_app');
          new MutationObserver(() => window.__statuses.push(icon.dataset.status))
            .observe(icon, { attributes: true, attributeFilter: ['data-status'] });
        }"""
    )
    old_pid = system.apps()["hello_app"]["pid"]
    assert old_pid in {
        p.pid for p in psutil.Process(system.proc.pid).children(recursive=True)
    }
    psutil.Process(old_pid).kill()
    page.wait_for_function(
        "() => window.__statuses.some(s => s !== 'running') && "
        "document.getElementById('task_hello_app').dataset.status === 'running'",
        timeout=30000,
    )
    seen = page.evaluate("() => window.__statuses")
    assert {"restarting", "starting"} & set(seen), seen
    assert system.wait_app("hello_app", "running")["pid"] != old_pid


def test_instruction_sent_from_elsewhere_shows_on_the_desktop(page, system):
    """An instruction from the CLI (no client id) opens its app's window with the
    result, from the `task_done` event."""
    answer = system.say("跟我打个招呼")
    assert [t["app_id"] for t in answer["tasks"]] == ["hello_app"]
    expect(page.locator("#win_hello_app .v-text")).to_have_text("你好！很高兴见到你。")


def test_the_pages_own_instruction_is_rendered_once(page, system):
    """The page's `task_done` events carry its client id and are not rendered again."""
    page.click("#task_hello_app")  # the window's initial view first
    expect(page.locator("#win_hello_app .v-text")).to_have_text("你好！很高兴见到你。")
    page.evaluate(COUNT_TEXT_VIEWS)
    page.fill("#command_input", "向我问好")
    page.press("#command_input", "Enter")
    page.wait_for_function("() => window.__textViews >= 1")  # the answer came
    page.wait_for_timeout(800)  # room for a late task_done event to render again
    assert page.evaluate("() => window.__textViews") == 1


def test_progress_events_that_come_after_the_answer_leave_the_window_as_answered(
    browser, system
):
    """The stream lags 1.5 s: `task_started` and `step_done` of the page's own
    instruction come after its answer was shown. The window keeps the answer's
    status and no loading state covers it."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="zh-CN")
    try:
        page = context.new_page()
        page.add_init_script(LAGGING_STREAM)
        page.goto(desktop_url(system))
        page.wait_for_selector("#task_gallery_app")
        page.evaluate("() => { window.__sseDelay = 1500; }")
        page.fill("#command_input", "画廊 展示 chart")
        with page.expect_response("**/api/instruction"):
            page.press("#command_input", "Enter")
        status = page.locator("#win_gallery_app .win-status")
        expect(status).to_have_text("画廊：chart")
        page.wait_for_timeout(1500 + 1200)  # the late events, and the loading delay after
        expect(status).to_have_text("画廊：chart")
        expect(page.locator("#win_gallery_app")).not_to_have_class(re.compile(r"\bbusy\b"))
        # events still reach the window: an instruction sent elsewhere is shown from
        # its own (late) events
        assert system.say("画廊 展示 table")["tasks"][0]["status"] == "done"
        expect(page.locator("#win_gallery_app .v-table")).to_be_visible(timeout=10_000)
        expect(status).to_have_text("画廊：table")
    finally:
        context.close()
