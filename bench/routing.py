"""Routing figures of `aios bench`: time per deterministic route, and LLM-free share.

`route_p50_ms` times `DeterministicRouter.route` (the routing the pipeline does
for every instruction) over the routing test set, once with the shipped apps'
manifests and once with 100 synthetic apps installed beside them (`synthetic_
profiles`: overlapping, realistic vocabularies, so the index is really searched).
`zero_llm_share` routes the same set through the pipeline's `FallbackRouter` with
a model configured — a scripted fake OpenAI-compatible server on loopback
(`FakeChatServer`) that always answers "no app" — and counts the instructions that
were answered without a single model call.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from controller.apps.discovery import discover_apps
from controller.routing.router import AppProfile, DeterministicRouter

__all__ = [
    "FakeChatServer",
    "load_routing_texts",
    "route_p50_ms",
    "shipped_profiles",
    "synthetic_profiles",
    "zero_llm_share",
]

# (Chinese, English) themes of the synthetic apps; several apps share a theme.
_THEMES = [
    ("天气", "weather"),
    ("日历", "calendar"),
    ("翻译", "translate"),
    ("笔记", "notes"),
    ("计时器", "timer"),
    ("闹钟", "alarm"),
    ("地图", "map"),
    ("新闻", "news"),
    ("股票", "stocks"),
    ("邮件", "mail"),
    ("相册", "photos"),
    ("视频", "video"),
    ("词典", "dictionary"),
    ("计算器", "calculator"),
    ("购物", "shopping"),
    ("外卖", "food delivery"),
    ("打车", "taxi"),
    ("健身", "fitness"),
    ("菜谱", "recipe"),
    ("汇率", "exchange rate"),
    ("快递", "parcel"),
    ("航班", "flight"),
    ("酒店", "hotel"),
    ("电影", "movie"),
    ("阅读", "reading"),
    ("播客", "podcast"),
    ("收音机", "radio"),
    ("待办", "todo"),
    ("联系人", "contacts"),
    ("文件管理", "file manager"),
    ("备份", "backup"),
    ("下载管理", "download manager"),
    ("截图", "screenshot"),
    ("录音", "recorder"),
    ("白板", "whiteboard"),
    ("表格", "spreadsheet"),
    ("幻灯片", "slides"),
    ("密码", "password"),
    ("网络测速", "speed test"),
    ("电量", "battery"),
    ("游戏", "game"),
    ("彩票", "lottery"),
    ("星座", "horoscope"),
    ("记账", "budget"),
    ("学习", "study"),
    ("单词", "vocabulary"),
    ("诗词", "poetry"),
    ("壁纸", "wallpaper"),
    ("主题", "theme"),
    ("日程", "schedule"),
]
_VERBS = [("打开", "open"), ("查看", "show"), ("帮我查一下", "check"), ("设置", "set up")]


def load_routing_texts(path: Path) -> list[str]:
    """The instructions of the routing test set (`{"cases": [{"text": …}, …]}`)."""
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    cases = raw.get("cases", raw) if isinstance(raw, dict) else raw
    return [
        str(case["text"]) for case in cases if isinstance(case, dict) and case.get("text")
    ]


def shipped_profiles(apps_dir: Path) -> tuple[AppProfile, ...]:
    """The routable apps of `apps_dir`, as the supervisor hands them to the router."""
    return tuple(
        AppProfile.of(spec.app_id, spec.manifest)
        for spec in discover_apps(Path(apps_dir))
        if spec.ok and spec.manifest is not None
    )


def synthetic_profiles(count: int) -> tuple[AppProfile, ...]:
    """`count` made-up apps with manifest-like vocabularies (deterministic)."""
    profiles = []
    for i in range(count):
        zh, en = _THEMES[i % len(_THEMES)]
        variant = i // len(_THEMES)
        verb_zh, verb_en = _VERBS[i % len(_VERBS)]
        profiles.append(
            AppProfile(
                app_id=f"synthetic_{i:03d}",
                name=f"{zh}助手{variant or ''}",
                description=f"{zh}相关的功能：{verb_zh}{zh}、管理{zh}记录 ({en} tools)",
                keywords=(
                    zh,
                    en,
                    f"{zh}记录",
                    f"{en} {('app', 'tool', 'center')[variant % 3]}",
                ),
                examples=(
                    f"{verb_zh}{zh}",
                    f"帮我看看今天的{zh}",
                    f"{verb_en} my {en}",
                    f"{en} for tomorrow",
                ),
            )
        )
    return tuple(profiles)


def route_p50_ms(
    profiles: Sequence[AppProfile], texts: Sequence[str], rounds: int
) -> float:
    """Median time of one `DeterministicRouter.route` call, in milliseconds.

    The first call (which builds and caches the index for these apps) is left out:
    the pipeline pays it once per set of installed apps, not per instruction.
    """
    router = DeterministicRouter()
    apps = tuple(profiles)
    router.route(texts[0], apps)
    samples = []
    for _ in range(max(1, rounds)):
        for text in texts:
            started = time.perf_counter()
            router.route(text, apps)
            samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


class FakeChatServer:
    """A scripted OpenAI-compatible chat server on loopback: always "no app".

    Counts the chat requests it answers, so the benchmark can check the router's
    own `llm_calls` bookkeeping against what really reached the "model".
    """

    def __init__(self) -> None:
        self.requests = 0
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                size = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(size)
                with lock:
                    outer.requests += 1
                message = {"role": "assistant", "content": json.dumps({"tasks": []})}
                body = json.dumps(
                    {
                        "id": "chatcmpl-bench",
                        "object": "chat.completion",
                        "created": 1700000000,
                        "model": "bench-fake",
                        "choices": [
                            {"index": 0, "message": message, "finish_reason": "stop"}
                        ],
                        "usage": {
                            "prompt_tokens": 1,
                            "completion_tokens": 1,
                            "total_tokens": 2,
                        },
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def zero_llm_share(
    profiles: Sequence[AppProfile], texts: Sequence[str]
) -> tuple[float, int]:
    """(share of `texts` routed with no model call, model calls counted by the fake)."""
    from aios_runtime.settings import Settings
    from controller.llm.client import LLMClient
    from controller.routing.llm_router import FallbackRouter, LLMRouter

    apps = tuple(profiles)
    with FakeChatServer() as fake:
        settings = Settings.model_validate(
            {"llm": {"api_key": "bench-fake-key", "base_url": fake.base_url}}
        )
        client = LLMClient(settings, timeout=10.0, max_retries=0)
        router = FallbackRouter(DeterministicRouter(), LLMRouter(client))
        without = sum(1 for text in texts if router.route(text, apps).llm_calls == 0)
        calls = fake.requests
    return without / max(1, len(texts)), calls
