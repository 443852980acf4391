"""The renderer against the real system: every view type of S-52 (plus the unknown
fallback and the error view), every view type's sample built by `aios_sdk.views`
drawn by views.js slot by slot, every action type of S-53 with its exact payload, the
UI commands of S-82, and hostile strings shown as text (SECURITY.md Q2).

The gallery test app echoes each `action_request` it receives as the JSON content of
a `text` view, so the tests read exactly what reached the app.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from playwright.sync_api import expect

from aios_protocol.views import SYSTEM_VIEW_TYPES, VIEW_TYPES
from aios_sdk import views
from tests.view_samples import view_samples

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIN = "#win_gallery_app"
PAYLOAD_KEYS = {"params", "form_values", "selected", "checked", "value", "href", "on"}


def open_gallery(page) -> None:
    page.click("#task_gallery_app")
    expect(page.locator(f"{WIN} .v-text")).to_contain_text("画廊文本")


def show(page, view: str) -> None:
    """Ask the gallery for `view` through its show_<view> button."""
    page.click(f"#btn_show_{view}")
    expect(page.locator(f"{WIN} .win-status")).to_contain_text(
        "画廊" if view != "xss" else "<img"
    )


def trigger(page, act: Callable[[], None], action_id: str) -> tuple[dict, dict]:
    """Run `act`; return (body the desktop POSTed, action_request the app received)."""
    page.eval_on_selector(f"{WIN} .view", "n => { n.dataset.stale = '1'; }")
    with page.expect_request(
        lambda r: r.method == "POST" and r.url.endswith("/api/apps/gallery_app/action")
    ) as sent:
        act()
    echo = page.locator(f"{WIN} .view:not([data-stale]) .v-text")
    expect(echo).to_contain_text(f'"action_id": "{action_id}"')
    return json.loads(sent.value.post_data), json.loads(echo.text_content())


# ------------------------------------------------------------------------ views

VIEW_CHECKS: dict[str, Callable] = {}


def check(view: str, into: dict[str, Callable] = VIEW_CHECKS):
    """Register the decorated function as the check of `view` in `into`."""

    def register(fn):
        into[view] = fn
        return fn

    return register


@check("text")
def _text(win):
    expect(win.locator(".v-text")).to_have_text("画廊文本 gallery text\n第二行")


@check("list")
def _list(win):
    items = win.locator(".v-list-item")
    expect(items).to_have_count(2)
    expect(win.locator(".v-title")).to_have_text("歌曲列表")
    expect(items.nth(0).locator(".v-list-title")).to_have_text("七里香")
    expect(items.nth(0).locator(".v-list-sub")).to_have_text("周杰伦")
    expect(items.nth(1).locator(".v-list-sub")).to_have_text("周杰伦 · 3:43")


@check("card")
def _card(win):
    cards = win.locator(".v-card")
    expect(cards).to_have_count(2)
    expect(cards.nth(0).locator(".v-card-title")).to_have_text("卡片甲")
    expect(cards.nth(1).locator(".v-card-desc")).to_have_text("描述乙")
    expect(cards.nth(0).locator("img")).to_have_js_property("naturalWidth", 4)


@check("table")
def _table(win):
    expect(win.locator("th")).to_have_text(["名称", "大小"])
    expect(win.locator("tbody tr")).to_have_count(2)
    expect(win.locator("tbody tr").nth(0).locator("td")).to_have_text(["a.py", "120"])


@check("form")
def _form(win):
    expect(win.locator(".v-form input[name=keyword]")).to_be_visible()
    expect(win.locator(".v-form input[name=count]")).to_have_attribute("type", "number")
    expect(win.locator(".v-form")).to_contain_text("关键词")


@check("media")
def _media(win):
    audio = win.locator("audio.v-audio")
    expect(audio).to_have_attribute(
        "src", re.compile(r"/api/apps/gallery_app/files/tone\.wav\?token=")
    )
    expect(win.locator(".v-media-title")).to_contain_text("测试音 tone")
    # the local workspace file really loads through the controller (token on the URL)
    win.page.wait_for_function(
        "a => a.readyState >= 1 && a.duration > 0.4", arg=audio.element_handle()
    )


@check("image")
def _image(win):
    expect(win.locator(".v-image img")).to_have_js_property("naturalWidth", 4)
    expect(win.locator(".v-image figcaption")).to_have_text("红色方块 red square")


@check("chart")
def _chart(win):
    expect(win.locator(".chart-bar")).to_have_count(3)
    expect(win.locator(".chart-label")).to_have_text(["一月", "二月", "三月"])
    expect(win.locator(".chart-value")).to_have_text(["3", "7", "5"])
    heights = win.locator(".chart-bar").evaluate_all(
        "bars => bars.map(b => b.offsetHeight)"
    )
    assert heights[1] > heights[2] > heights[0] > 0


@check("code")
def _code(win):
    expect(win.locator(".v-code-lang")).to_have_text("python")
    expect(win.locator(".v-code pre code")).to_have_text(
        "print('你好')\nfor i in range(3):\n    print(i)"
    )


@check("dashboard")
def _dashboard(win):
    widgets = win.locator(".v-widget")
    expect(widgets).to_have_count(4)
    expect(widgets.nth(0)).to_contain_text("一切正常")
    expect(widgets.nth(1).locator("svg.chart-line polyline")).to_have_count(1)
    expect(widgets.nth(2).locator("td")).to_have_text(["1", "init"])
    expect(widgets.nth(3).locator(".v-list-title")).to_have_text("写测试")
    expect(win.locator(".v-widget-title")).to_have_text(["状态", "趋势", "进程", "待办"])


@check("mystery")
def _unknown(win):
    fallback = win.locator(".view-unknown")
    expect(fallback).to_contain_text("mystery")
    shown = json.loads(fallback.locator("pre").text_content())
    assert shown == {"secret": "未知视图的数据", "n": 42}


@pytest.mark.parametrize("view", list(VIEW_CHECKS))
def test_each_view_type_renders(page, view, shot):
    open_gallery(page)
    show(page, view)
    win = page.locator(WIN)
    expect(win).to_have_attribute("data-view-type", view)
    VIEW_CHECKS[view](win)
    shot(page, view)


def test_an_app_failure_is_an_error_view_in_its_window(page, shot):
    open_gallery(page)
    page.click("#btn_fail")
    error = page.locator(f"{WIN} .v-error")
    expect(error).to_contain_text("画廊故意出错")
    expect(page.locator(f"{WIN} .win-status")).to_have_attribute("data-level", "error")
    shot(page, "error")


# ------------------------------------------------ the shapes, straight from the SDK

SAMPLES = view_samples()
SAMPLE_CHECKS: dict[str, Callable] = {}


def render_reply(page, body: dict):
    """Render the reply `body` with views.js's `renderView` (as the gallery's window
    would show it) into `#probe`; return the view's locator."""
    page.evaluate(
        """async ({ reply }) => {
          const { renderView } = await import("/desktop/views.js");
          document.getElementById("probe")?.remove();
          const probe = document.createElement("div");
          probe.id = "probe";
          probe.append(renderView(reply.view_type, reply.data, { appId: "gallery_app", reply }));
          document.body.append(probe);
        }""",
        {"reply": body},
    )
    return page.locator("#probe > .view")


@check("text", SAMPLE_CHECKS)
def _text_sample(view, data):
    expect(view.locator(".v-title")).to_have_text(data["title"])
    expect(view.locator(".v-text")).to_have_text(data["content"])


@check("list", SAMPLE_CHECKS)
def _list_sample(view, data):
    items = view.locator(".v-list-item")
    expect(items.locator(".v-list-title")).to_have_text([i["title"] for i in data["items"]])
    expect(items.locator(".v-list-sub")).to_have_text(["周杰伦"])  # the second has none
    expect(items.nth(0).locator(".v-list-icon")).to_have_text("🎵")
    expect(items.nth(0)).to_have_attribute("data-item-id", "s_1")
    expect(items.nth(1)).not_to_have_attribute("data-item-id", re.compile(".*"))


@check("card", SAMPLE_CHECKS)
def _card_sample(view, data):
    cards = view.locator(".v-card")
    expect(cards.locator(".v-card-title")).to_have_text(["卡片甲", "卡片乙"])
    expect(cards.locator(".v-card-desc")).to_have_text(["描述甲"])
    expect(cards.nth(0)).to_have_attribute("data-item-id", "c_1")
    expect(cards.nth(0).locator("img")).to_have_js_property("naturalWidth", 1)


@check("table", SAMPLE_CHECKS)
def _table_sample(view, data):
    expect(view.locator(".v-title")).to_have_text(data["title"])
    expect(view.locator("th")).to_have_text(data["columns"])
    rows = view.locator("tbody tr")
    expect(rows.nth(0).locator("td:not(.v-item-actions)")).to_have_text(["a.py", "120"])
    expect(rows.nth(1).locator("td")).to_have_text(["b|c.txt", ""])
    expect(rows.nth(0)).to_have_attribute("data-item-id", "a.py")
    expect(view.locator(".v-empty")).to_have_count(0)  # it has rows


@check("form", SAMPLE_CHECKS)
def _form_sample(view, data):
    expect(view).to_have_class(re.compile(r"\bv-form\b"))
    form = view
    expect(form.locator("input[name=city]")).to_have_value("上海")
    expect(form.locator("input[name=count]")).to_have_attribute("type", "number")
    expect(form.locator("select[name=kind]")).to_have_value("b")
    expect(form.locator("select[name=kind] option")).to_have_text(["甲", "乙"])
    expect(form.locator("textarea[name=notes]")).to_have_attribute("placeholder", "…")
    expect(form.locator(".v-field > span")).to_have_text(["城市", "数量", "类型", "备注"])


@check("media", SAMPLE_CHECKS)
def _media_sample(view, data):
    expect(view.locator("audio.v-audio")).to_have_attribute(
        "src", re.compile(r"/api/apps/gallery_app/files/tone\.wav\?token=")
    )
    expect(view.locator(".v-media-title")).to_have_text("🎵 测试音")
    expect(view.locator(".v-media-sub")).to_have_text("画廊")


@check("image", SAMPLE_CHECKS)
def _image_sample(view, data):
    expect(view.locator("img")).to_have_js_property("naturalWidth", 1)
    expect(view.locator("figcaption")).to_have_text("红色方块")


@check("chart", SAMPLE_CHECKS)
def _chart_sample(view, data):
    expect(view).to_have_attribute("data-chart-type", "bar")
    expect(view.locator(".v-title")).to_have_text("销量")
    expect(view.locator(".chart-label")).to_have_text(data["labels"])
    expect(view.locator(".chart-value")).to_have_text(["3", "7", "5"])
    heights = view.locator(".chart-bar").evaluate_all(
        "bars => bars.map(b => b.style.height)"
    )
    assert heights == ["30%", "70%", "50%"]  # on the scale of `max` (10)


@check("code", SAMPLE_CHECKS)
def _code_sample(view, data):
    expect(view.locator(".v-title")).to_have_text("hello.py")
    expect(view.locator(".v-code-lang")).to_have_text("python")
    expect(view.locator("pre code")).to_have_text(data["code"])


@check("dashboard", SAMPLE_CHECKS)
def _dashboard_sample(view, data):
    expect(view.locator(":scope > .v-title")).to_have_text("总览")
    widgets = view.locator(".v-widget")
    expect(widgets).to_have_count(3)
    for i, part in enumerate(data["widgets"]):
        expect(widgets.nth(i)).to_have_attribute("data-widget-type", part["type"])
        expect(widgets.nth(i).locator(".v-widget-title")).to_have_text(part["title"])
        expect(widgets.nth(i).locator(".view")).to_have_attribute(
            "data-view-type", part["type"]
        )
    expect(widgets.nth(0).locator(".v-text")).to_have_text("一切正常")
    expect(widgets.nth(1).locator("svg.chart-line polyline")).to_have_count(1)
    expect(widgets.nth(2).locator(".v-metric-value")).to_have_text("42 %")


@check("metric", SAMPLE_CHECKS)
def _metric_sample(view, data):
    expect(view.locator(".v-metric-value")).to_have_text("42 %")
    expect(view.locator(".v-metric-label")).to_have_text("CPU")


@check("loading", SAMPLE_CHECKS)
def _loading_sample(view, data):
    expect(view.locator(".spinner")).to_have_count(1)
    expect(view).to_have_text("正在读取…")


def test_a_loading_view_shows_its_words_at_once_and_its_spinner_only_after_a_wait(page):
    """A short wait flashes no spinner (each of its frames costs the page work while
    an app is starting): hidden when drawn, shown after SPINNER_AFTER_MS."""
    waited = page.evaluate(
        """async () => {
          const { renderView, SPINNER_AFTER_MS } = await import("/desktop/views.js");
          const view = renderView("loading", { text: "正在读取…" }, { appId: "gallery_app" });
          document.body.append(view);
          const spinner = view.querySelector(".spinner");
          const drawn = performance.now();
          const hiddenAtFirst = spinner.hidden && spinner.offsetParent === null;
          await new Promise((done) => {
            const watch = new MutationObserver(() => { if (!spinner.hidden) { watch.disconnect(); done(); } });
            watch.observe(spinner, { attributes: true });
          });
          const after = performance.now() - drawn;
          view.remove();
          return { hiddenAtFirst, after, least: SPINNER_AFTER_MS };
        }"""
    )
    assert waited["hiddenAtFirst"], waited
    assert waited["after"] >= waited["least"] - 5, waited


@check("error", SAMPLE_CHECKS)
def _error_sample(view, data):
    expect(view).to_have_attribute("role", "alert")
    expect(view.locator(".v-error-message")).to_have_text("没有找到这首歌")
    expect(view.locator(".v-details-text")).to_have_text("code: no_song\nHTTP 404")


def test_the_desktop_draws_every_view_type_in_its_table(page):
    drawn = page.evaluate(
        "async () => Object.keys((await import('/desktop/views.js')).VIEWS)"
    )
    assert set(drawn) == {*VIEW_TYPES, *SYSTEM_VIEW_TYPES}


@pytest.mark.parametrize("view_type", VIEW_TYPES)
def test_each_view_type_renders_the_builders_sample(page, view_type):
    """The JavaScript reads the shape the Python builders write: no fallback, no
    guess, every slot where it belongs."""
    assert set(SAMPLE_CHECKS) == set(VIEW_TYPES)
    view = render_reply(page, SAMPLES[view_type])
    expect(view).to_have_attribute("data-view-type", view_type)
    expect(view).to_have_class(re.compile(rf"\bview-{view_type}\b"))
    SAMPLE_CHECKS[view_type](view, SAMPLES[view_type]["data"])


def test_a_table_without_rows_says_its_empty_sentence(page):
    view = render_reply(page, views.table_reply(["名称"], [], empty="没有文件"))
    expect(view.locator("th")).to_have_text(["名称"])
    expect(view.locator(".v-empty")).to_have_text("没有文件")


# ---------------------------------------------------------------------- actions


def _fill_search(page):
    page.fill("#btn_search input[name=keyword]", "周杰伦")
    page.click("#btn_search button[type=submit]")


ACTION_CASES = {
    "button": (
        "play",
        lambda page: page.click("#btn_play"),
        "params",
        {"song_id": "s_001"},
    ),
    "submit_form": ("search", _fill_search, "form_values", {"keyword": "周杰伦"}),
    "select": (
        "quality",
        lambda page: page.select_option("#btn_quality select", label="高品"),
        "selected",
        "高品",
    ),
    "checkbox": (
        "tags",
        lambda page: page.check("#btn_tags >> text=流行"),
        "checked",
        ["pop"],
    ),
    "radio": (
        "mode",
        lambda page: page.check("#btn_mode >> text=列表循环"),
        "selected",
        "列表循环",
    ),
    "input": (
        "filter",
        lambda page: (
            page.fill("#btn_filter input", "七里"),
            page.press("#btn_filter input", "Enter"),
        ),
        "value",
        "七里",
    ),
    "link": (
        "site",
        lambda page: page.click("#btn_site"),
        "href",
        "https://example.com/docs",
    ),
    "toggle": ("shuffle", lambda page: page.click("#btn_shuffle"), "on", True),
    "slider": (
        "volume",
        lambda page: (
            page.focus("#btn_volume input[type=range]"),
            page.keyboard.press("End"),
        ),
        "value",
        100,
    ),
    "datetime": (
        "remind",
        lambda page: page.fill("#btn_remind input", "2026-08-14T22:00"),
        "value",
        "2026-08-14T22:00",
    ),
}


@pytest.mark.parametrize("action_type", list(ACTION_CASES))
def test_each_action_type_sends_the_spec_payload(page, action_type, shot):
    action_id, act, key, expected = ACTION_CASES[action_type]
    open_gallery(page)
    url_before = page.url
    sent, received = trigger(page, lambda: act(page), action_id)
    session = sent.pop("session_id")
    assert session.startswith("sess") or session
    assert sent.pop("language") == "zh-CN"  # the page's, for the app's answer
    assert sent == {"action_id": action_id, "type": action_type, key: expected}
    assert received == {"action_id": action_id, key: expected, "session_id": session}
    assert not (PAYLOAD_KEYS - {key}) & set(received)
    assert page.url == url_before  # a link never navigates the desktop away
    shot(page, action_type)


def test_second_control_of_one_action_id_gets_a_numbered_id(page):
    open_gallery(page)
    _, received = trigger(page, lambda: page.click("#btn_play_2"), "play")
    assert received["params"] == {"song_id": "s_002"}


def test_checkbox_sends_every_checked_option(page):
    open_gallery(page)
    trigger(page, lambda: page.check("#btn_tags >> text=流行"), "tags")
    _, received = trigger(page, lambda: page.check("#btn_tags >> text=摇滚"), "tags")
    # the app keeps the boxes as they were, so both are checked now, in option order
    assert received["checked"] == ["摇滚", "pop"]
    expect(page.locator("#btn_tags input:checked")).to_have_count(2)


def test_submit_form_without_fields_sends_the_form_view_values(page):
    open_gallery(page)
    show(page, "form")
    page.fill(f"{WIN} .v-form input[name=keyword]", "稻香")
    page.fill(f"{WIN} .v-form input[name=count]", "3")
    sent, received = trigger(page, lambda: page.click("#btn_form_submit"), "form_submit")
    assert sent["form_values"] == {"keyword": "稻香", "count": 3}
    assert received["form_values"] == {"keyword": "稻香", "count": 3}


# ------------------------------------------------------------------ UI commands


def test_move_command_in_an_app_reply_moves_btn_play(page, shot):
    open_gallery(page)
    page.click("#btn_ui_move")
    page.wait_for_function(
        "() => { const r = document.getElementById('btn_play')?.getBoundingClientRect();"
        " return r && Math.round(r.left) === 20 && Math.round(r.top) === 20; }"
    )
    expect(page.locator("#btn_play")).to_have_text("播放")
    shot(page, "moved")
    # still the working control: clicking it sends its action
    _, received = trigger(page, lambda: page.click("#btn_play"), "play")
    assert received["params"] == {"song_id": "s_001"}


def test_f3_system_agent_moves_the_play_button_through_the_snapshot(page, shot):
    """F-3: the desktop's snapshot lets the system app find btn_play; its move lands."""
    with page.expect_response(
        lambda r: (
            r.url.endswith("/api/ui/snapshot") and "btn_play" in (r.request.post_data or "")
        )
    ):
        open_gallery(page)  # the debounced snapshot with btn_play is stored
    page.fill("#command_input", "把播放按钮移到左上角")
    with page.expect_response("**/api/instruction") as answer:
        page.press("#command_input", "Enter")
    tasks = answer.value.json()["tasks"]
    assert [t["app_id"] for t in tasks] == ["system_agent"], tasks
    # the gallery shows two 播放 buttons: the answer asks which, moving nothing yet
    system = page.locator("#win_system_agent")
    expect(system.locator(".v-text")).to_contain_text("有 2 个“播放按钮”")
    system.locator(".win-actions button").first.click()
    page.wait_for_function(
        "() => { const r = document.getElementById('btn_play')?.getBoundingClientRect();"
        " return r && Math.round(r.left) === 20 && Math.round(r.top) === 20; }"
    )
    expect(system.locator(".win-status")).to_contain_text("左上角")
    shot(page, "f3")


def post_command(page, command: dict) -> None:
    page.evaluate(
        "c => window.postMessage({aios: 'ui_command', command: c}, location.origin)",
        command,
    )


def test_every_ui_operation_through_the_one_message_handler(page, shot):
    open_gallery(page)
    play = page.locator("#btn_play")
    post_command(page, {"op": "resize", "id": "btn_play", "width": 160, "height": 50})
    expect(play).to_have_css("width", "160px")
    expect(play).to_have_css("height", "50px")
    post_command(page, {"op": "change_color", "id": "btn_play", "color": "red"})
    expect(play).to_have_css("background-color", "rgb(255, 0, 0)")
    post_command(page, {"op": "change_text", "id": "btn_play", "text": "开始播放"})
    expect(play).to_have_text("开始播放")
    post_command(page, {"op": "rotate", "id": "btn_play", "degrees": 90})
    expect(play).to_have_css("transform", "matrix(0, 1, -1, 0, 0, 0)")  # 90°
    post_command(page, {"op": "hide", "id": "btn_play"})
    expect(play).to_be_hidden()
    post_command(page, {"op": "show", "id": "btn_play"})
    expect(play).to_be_visible()
    post_command(page, {"op": "move", "id": "win_gallery_app", "x": 300, "y": 120})
    expect(page.locator(WIN)).to_have_css("left", "300px")
    shot(page, "ui-ops")
    # remembered per id: a re-render of the window keeps the changes
    show(page, "text")
    expect(page.locator("#btn_play")).to_have_text("开始播放")
    expect(page.locator("#btn_play")).to_have_css("background-color", "rgb(255, 0, 0)")
    # window commands: close, open (S-23 flow), focus
    post_command(page, {"op": "close_window", "id": "gallery_app"})
    expect(page.locator(WIN)).to_have_count(0)
    post_command(page, {"op": "open_window", "id": "hello_app"})
    expect(page.locator("#win_hello_app .v-text")).to_contain_text("你好")
    post_command(page, {"op": "focus_window", "id": "gallery_app"})
    expect(page.locator(f"{WIN} .v-text")).to_be_visible()
    z = page.eval_on_selector_all(
        ".window", "ws => Object.fromEntries(ws.map(w => [w.id, Number(w.style.zIndex)]))"
    )
    assert z["win_gallery_app"] > z["win_hello_app"]
    # a bad command is reported, not thrown
    post_command(page, {"op": "explode", "id": "btn_play"})
    expect(page.locator("#toasts")).to_contain_text("explode")


# --------------------------------------------------------------------- security


def test_hostile_strings_from_an_app_stay_text(page, shot):
    open_gallery(page)
    show(page, "xss")
    win = page.locator(WIN)
    marker = '<img src=x onerror="window.__xss=1">'
    expect(win.locator(".v-widget-title").first).to_have_text(marker)
    expect(win.locator(".v-text")).to_have_text(marker)
    expect(win.locator(".v-list-title")).to_have_text(marker)
    expect(win.locator("th")).to_have_text(marker)
    expect(win.locator(".v-card-title")).to_have_text(marker)
    expect(win.locator(".win-status")).to_have_text(marker)
    expect(page.locator("#btn_xss_button")).to_have_text(marker)
    # the notify tool's toast (executor → controller → SSE) shows it as text too
    expect(page.locator(".toast-title", has_text=marker)).to_have_count(1)
    expect(page.locator(".toast-body", has_text=marker)).to_have_count(1)
    assert page.locator("img[src=x]").count() == 0
    assert page.locator(f"{WIN} .v-card img").count() == 0  # javascript: URL not loaded
    page.wait_for_timeout(300)  # give any injected handler the chance to run
    assert page.evaluate("() => window.__xss") is None
    shot(page, "xss")


def test_page_carries_a_strict_content_security_policy(page):
    policy = page.get_attribute("meta[http-equiv=Content-Security-Policy]", "content")
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert page.locator("script:not([src])").count() == 0


# ---------------------------------------------------------------- confirmations


@pytest.mark.parametrize(
    ("decision", "outcome"),
    [("deny", "step_1: error denied_by_user"), ("allow_once", "step_1: ok")],
)
def test_a_risky_step_waits_for_the_users_decision(page, system, decision, outcome, shot):
    open_gallery(page)
    page.click("#btn_risky")
    question = page.locator(f"{WIN} .v-confirm")
    expect(question).to_contain_text("gallery.db")
    pending = system.get("/api/confirmations").json()["confirmations"]
    assert [c["app_id"] for c in pending] == ["gallery_app"]
    shot(page, "question")
    # the dialog's focus is on the safe choice: Enter runs nothing
    expect(page.locator("#confirm_deny")).to_be_focused()
    # a reload asks the same question again (the controller keeps it)
    page.reload()
    page.wait_for_selector("#task_gallery_app")
    expect(page.locator("#confirm_dialog")).to_have_attribute(
        "data-confirmation-id", pending[0]["confirmation_id"]
    )
    expect(page.locator("#confirm_dialog")).to_contain_text("gallery.db")
    with page.expect_response(f"**/api/confirmations/{pending[0]['confirmation_id']}"):
        page.click(f"#confirm_{decision}")
    expect(page.locator(f"{WIN} .v-text")).to_have_text(outcome)
    expect(page.locator(f"{WIN} .v-confirm")).to_have_count(0)
    assert system.get("/api/confirmations").json()["confirmations"] == []
