"""画廊 Gallery: the desktop tests' app, built on the SDK like any other app.

It returns each of the ten view types of S-52, built with `aios_sdk.views` (plus an
unknown one, an error and hostile strings) and carries one action of each of the ten types of S-53 in every
reply. Which view it shows: the `show_<view>` button's `params.view`, or the last
word of the instruction ("gallery chart"). Any other action is echoed back: the
reply is a `text` view whose content is the JSON of the `action_request` the app
received, so a test can read exactly what reached the app.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib

from aios_sdk import AIOSAgent, serve, views

XSS = '<img src=x onerror="window.__xss=1">'


def png_data_uri(width: int, height: int, rgb: tuple[int, int, int]) -> str:
    """A solid-colour PNG as a data: URI (no files, no network)."""
    row = b"\x00" + bytes(rgb) * width
    raw = zlib.compress(row * height)

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", raw)
        + chunk(b"IEND", b"")
    )
    return "data:image/png;base64," + base64.b64encode(png).decode()


RED = png_data_uri(4, 4, (220, 40, 40))

# one reply per view name, built with the SDK's builders (the shapes of
# aios_protocol.views); `mystery` is a view type no renderer knows
VIEWS: dict[str, dict] = {
    "text": views.text_reply("画廊文本 gallery text\n第二行"),
    "list": views.list_reply(
        [
            {"title": "七里香", "sub": "周杰伦"},
            {"id": "s_002", "title": "稻香", "sub": "周杰伦 · 3:43"},
        ],
        "歌曲列表",
    ),
    "card": views.card_reply(
        [
            {"title": "卡片甲", "desc": "描述甲", "image": RED},
            {"title": "卡片乙", "desc": "描述乙"},
        ]
    ),
    "table": views.table_reply(["名称", "大小"], [["a.py", 120], ["b.txt", 3]]),
    "form": views.form_reply(
        [
            {"name": "keyword", "label": "关键词", "type": "text"},
            {"name": "count", "label": "数量", "type": "number"},
        ]
    ),
    "media": views.media_reply("tone.wav", "测试音 tone"),
    "image": views.image_reply(RED, "红色方块 red square"),
    "chart": views.chart_reply(["一月", "二月", "三月"], [3, 7, 5]),
    "code": views.code_reply("print('你好')\nfor i in range(3):\n    print(i)", "python"),
    "dashboard": views.dashboard_reply(
        [
            views.widget(views.text_reply("一切正常"), "状态"),
            views.widget(
                views.chart_reply(["1", "2", "3"], [1, 4, 2], kind="line"), "趋势"
            ),
            views.widget(views.table_reply(["pid", "名称"], [[1, "init"]]), "进程"),
            views.widget(views.list_reply([{"title": "写测试"}]), "待办"),
        ]
    ),
    "mystery": views.reply("mystery", {"secret": "未知视图的数据", "n": 42}),
    "xss": views.dashboard_reply(
        [
            views.widget(views.text_reply(XSS), XSS),
            views.widget(views.list_reply([{"title": XSS, "sub": XSS}])),
            views.widget(views.table_reply([XSS], [[XSS]])),
            views.widget(
                views.card_reply(
                    [{"title": XSS, "desc": XSS, "image": "javascript:window.__xss=1"}]
                )
            ),
        ]
    ),
}

STANDARD_ACTIONS = [
    {
        "type": "button",
        "label": "播放",
        "action_id": "play",
        "params": {"song_id": "s_001"},
    },
    {
        "type": "button",
        "label": "播放",
        "action_id": "play",
        "params": {"song_id": "s_002"},
    },
    {
        "type": "submit_form",
        "label": "搜索",
        "action_id": "search",
        "fields": [{"name": "keyword", "label": "关键词", "type": "text"}],
    },
    {
        "type": "select",
        "label": "音质",
        "action_id": "quality",
        "options": ["标准", "高品", "无损"],
    },
    {
        "type": "checkbox",
        "label": "标签",
        "action_id": "tags",
        "options": ["摇滚", {"label": "流行", "value": "pop"}],
    },
    {
        "type": "radio",
        "label": "模式",
        "action_id": "mode",
        "options": ["单曲循环", "列表循环"],
    },
    {"type": "input", "label": "筛选", "action_id": "filter"},
    {
        "type": "link",
        "label": "文档",
        "action_id": "site",
        "href": "https://example.com/docs",
    },
    {"type": "toggle", "label": "随机播放", "action_id": "shuffle", "on": False},
    {
        "type": "slider",
        "label": "音量",
        "action_id": "volume",
        "min": 0,
        "max": 100,
        "value": 30,
    },
    {"type": "datetime", "label": "提醒", "action_id": "remind"},
    {"type": "button", "label": "移动播放按钮", "action_id": "ui_move"},
    {"type": "button", "label": "出错", "action_id": "fail"},
    {"type": "button", "label": "写数据库", "action_id": "risky"},
    {"type": "button", "label": "慢操作", "action_id": "slow"},
]


def show_buttons() -> list[dict]:
    return [
        {
            "type": "button",
            "label": f"看 {name}",
            "action_id": f"show_{name}",
            "params": {"view": name},
        }
        for name in VIEWS
    ]


class GalleryAgent(AIOSAgent):
    name = "画廊 Gallery"
    description = "每种视图和操作各一个"
    icon = "🖼️"
    role_prompt = "你是一个测试用的画廊小AI"

    def handle(self, instruction, context, action_request=None):
        if action_request is None:
            words = (instruction or "").split()
            if words and words[-1] == "slow":
                return self.slow(context)
            if words and words[-1] == "lines":
                return self.lines()
            return self.view(words[-1] if words else "text")
        action_id = action_request.get("action_id", "")
        if action_id.startswith("show_"):
            return self.view(str((action_request.get("params") or {}).get("view", "")))
        if action_id == "fail":
            raise RuntimeError("画廊故意出错 (deliberate failure)")
        if action_id == "risky":
            return self.risky(context)
        if action_id == "slow":
            return self.slow(context)
        if action_id == "ui_move":
            reply = self.echo(action_request)
            reply["ui_commands"] = [{"op": "move", "id": "btn_play", "x": 20, "y": 20}]
            return reply
        return self.echo(action_request)

    def slow(self, context: dict) -> dict:
        """A step that runs for SLOW_SECONDS: the desktop shows it working, and cancels."""
        results = context.get("tool_results")
        if not results:
            step = {"step_id": 1, "tool": "shell_exec", "args": {"cmd": "python3 slow.py"}}
            return {
                "status": "ok",
                "view_type": "loading",
                "data": {},
                "steps": [step],
                "message": "慢慢来…",
            }
        return {
            "status": "ok",
            "view_type": "text",
            "data": {"content": "慢任务完成 slow done"},
            "message": "慢任务完成",
        }

    def lines(self) -> dict:
        """A several-line answer beside a dashboard (the answer belongs in the view)."""
        return {
            "status": "ok",
            "view_type": "dashboard",
            "data": VIEWS["dashboard"]["data"],
            "message": "内存占用 42%\n已用 3.2 GB / 共 7.6 GB\n交换分区 0 B",
        }

    def risky(self, context: dict) -> dict:
        """A plan with a database write: the controller asks the user first."""
        results = context.get("tool_results")
        if not results:
            step = {
                "step_id": 1,
                "tool": "db_query",
                "args": {
                    "dsn": "gallery.db",
                    "sql": "CREATE TABLE IF NOT EXISTS visits (n INTEGER)",
                },
            }
            return {
                "status": "ok",
                "view_type": "loading",
                "data": {},
                "steps": [step],
                "message": "正在处理...",
            }
        outcome = results.get("step_1") or {}
        text = f"step_1: {outcome.get('status')} {outcome.get('code') or ''}".strip()
        return {
            "status": "ok",
            "view_type": "text",
            "data": {"content": text},
            "message": text,
        }

    def view(self, name: str) -> dict:
        shown = VIEWS.get(name, VIEWS["text"])
        view_type, data = shown["view_type"], shown["data"]
        actions = STANDARD_ACTIONS + show_buttons()
        message = f"画廊：{view_type}"
        if name == "xss":
            self.call_tool("notify", title=XSS, body=XSS, level="warning")
            view_type = "dashboard"
            actions = [
                *actions,
                {"type": "button", "label": XSS, "action_id": "xss_button"},
            ]
            message = XSS
        elif name == "form":
            actions = [
                {"type": "submit_form", "label": "提交表单", "action_id": "form_submit"},
                *actions,
            ]
        return {
            "status": "ok",
            "view_type": view_type,
            "data": data,
            "actions": actions,
            "message": message,
        }

    def echo(self, action_request: dict) -> dict:
        actions = [dict(action) for action in STANDARD_ACTIONS]
        if (
            action_request.get("action_id") == "tags"
        ):  # the boxes stay as the user left them
            tags = next(a for a in actions if a["action_id"] == "tags")
            tags["checked"] = action_request.get("checked", [])
        return {
            "status": "ok",
            "view_type": "text",
            "data": {
                "content": json.dumps(action_request, ensure_ascii=False, sort_keys=True)
            },
            "actions": actions + show_buttons(),
            "message": f"收到 {action_request.get('action_id')}",
        }


if __name__ == "__main__":
    serve(GalleryAgent())
