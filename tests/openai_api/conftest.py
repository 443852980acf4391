"""A real Triton system for the `/v1` tests, and the `openai` client pointed at it.

The apps: the shipped `hello_app`, the echo app, the risky app (its steps pause for
the user's yes) and this folder's `views_app` (list / table / code views, a slow
answer, one tool step). config.json adds an `api_keys` entry and a short heartbeat.
"""

from __future__ import annotations

import copy
import shutil
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from tests.controller.system import (
    TEST_CONFIG,
    RunningSystem,
    build_apps_dir,
    serving,
)
from tests.security.conftest import add_security_apps

HERE = Path(__file__).resolve().parent
EXTRA_KEY = "sk-triton-test-key-0123456789"
HEARTBEAT_S = 0.2


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("openai_api")
    apps = build_apps_dir(root / "apps", test_apps=("echo_app",))
    add_security_apps(apps, ("risky_app",))
    shutil.copytree(HERE / "apps" / "views_app", apps / "views_app")
    config = copy.deepcopy(TEST_CONFIG)
    config["api_keys"] = [EXTRA_KEY]
    config["openai_api"] = {"heartbeat_s": HEARTBEAT_S}
    with serving(
        root, apps, ("echo_app", "risky_app", "views_app", "hello_app"), config=config
    ) as running:
        yield running


@pytest.fixture
def client(system: RunningSystem) -> openai.OpenAI:
    """The real `openai` client with the desktop token as its API key."""
    return openai.OpenAI(base_url=f"{system.url}/v1", api_key=system.token, max_retries=0)
