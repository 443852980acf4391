"""Fixtures of the LLM tests: one fake OpenAI-compatible server per module, clients on it.

The fake is real HTTP on 127.0.0.1; the real `openai` client talks to it. Timeouts
are short so that the timeout tests stay quick.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from aios_runtime.settings import Settings
from controller.llm.client import LLMClient
from controller.routing.router import AppProfile
from tests.fakes.openai_server import FakeOpenAI

SHORT_TIMEOUT = 0.5


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def fake(fake_server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    fake_server.reset()
    yield fake_server
    fake_server.reset()


@pytest.fixture
def make_client(fake: FakeOpenAI) -> Callable[..., LLMClient]:
    def build(
        *, key: str = "sk-test", timeout: float = SHORT_TIMEOUT, **kw: object
    ) -> LLMClient:
        settings = Settings(
            deepseek_api_key=key, llm_base_url=fake.base_url, llm_model="fake-model"
        )
        return LLMClient(settings, timeout=timeout, **kw)  # type: ignore[arg-type]

    return build


@pytest.fixture
def client(make_client: Callable[..., LLMClient]) -> LLMClient:
    return make_client()


APPS = (
    AppProfile(
        "music_app",
        "音乐应用",
        "搜索、播放和下载音乐",
        ("音乐", "播放", "歌"),
        ("帮我播放周杰伦的歌", "下载七里香"),
    ),
    AppProfile(
        "code_app",
        "代码应用",
        "编写和运行 Python 代码",
        ("代码", "python"),
        ("写一个计算斐波那契数列的程序",),
    ),
    AppProfile(
        "system_agent",
        "系统控制",
        "调整桌面界面元素",
        ("按钮", "窗口"),
        ("把播放按钮移到左上角",),
    ),
)


@pytest.fixture
def apps() -> tuple[AppProfile, ...]:
    return APPS
