"""One reply per view type, built with `aios_sdk.views`: the samples the builders'
shape tests, the Markdown tests and the desktop renderer's tests all read, so the
Python and the JavaScript sides agree on each view type's `data`."""

from __future__ import annotations

from typing import Any

from aios_sdk import views

# a 1×1 red PNG: an image that loads without files or network
PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4"
    "nGO4o6EBAAMQAS0ujiXaAAAAAElFTkSuQmCC"
)


def view_samples() -> dict[str, dict[str, Any]]:
    """view type → a reply of that type, every slot of its shape filled."""
    return {
        "text": views.text_reply("第一行\n第二行", title="文本"),
        "list": views.list_reply(
            [
                {"id": "s_1", "title": "七里香", "sub": "周杰伦", "icon": "🎵"},
                {"title": "稻香"},
            ],
            "歌曲",
            empty="没有歌",
        ),
        "card": views.card_reply(
            [
                {"id": "c_1", "title": "卡片甲", "desc": "描述甲", "image": PNG},
                {"title": "卡片乙"},
            ],
            "卡片",
        ),
        "table": views.table_reply(
            ["名称", "大小"],
            [["a.py", 120], ["b|c.txt", None]],
            row_ids=["a.py", None],
            title="文件",
            empty="没有文件",
        ),
        "form": views.form_reply(
            [
                {"name": "city", "label": "城市", "type": "text", "value": "上海"},
                {"name": "count", "label": "数量", "type": "number", "required": True},
                {
                    "name": "kind",
                    "label": "类型",
                    "type": "select",
                    "options": ["甲", {"label": "乙", "value": "b"}],
                    "value": "b",
                },
                {"name": "notes", "label": "备注", "type": "textarea", "placeholder": "…"},
            ],
            "天气",
        ),
        "media": views.media_reply(
            "tone.wav", "测试音", kind="audio", artist="画廊", autoplay=False
        ),
        "image": views.image_reply(PNG, "红色方块"),
        "chart": views.chart_reply(
            ["一月", "二月", "三月"], [3, 7, 5], kind="bar", title="销量", max=10
        ),
        "code": views.code_reply("print('你好')", "python", title="hello.py"),
        "dashboard": views.dashboard_reply(
            [
                views.widget(views.text_reply("一切正常"), "状态"),
                views.widget(views.chart_reply(["a", "b"], [1, 2], kind="line"), "趋势"),
                views.widget(views.metric_reply(42, unit="%", label="CPU"), "负载"),
            ],
            "总览",
        ),
        "metric": views.metric_reply(42, unit="%", label="CPU"),
        "loading": views.loading_reply("正在读取…"),
        "error": views.error_reply("no_song", "没有找到这首歌", detail="HTTP 404"),
    }
