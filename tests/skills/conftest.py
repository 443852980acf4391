"""Fixtures of the skills tests: real skill files, a real executor service, its provider.

`skills_harness` is the executor service (Flask's test client over the real ExecutorToolbox,
real sandbox) of `tests/executor/conftest.py` with app1 and app2 registered; its
shared skills folder is `<state_dir>/users/default/skills/` (the examples copied in at start).
`write_skill` writes a skill file; `wait_for` polls a condition.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from executor.providers.skills import SkillsProvider
from tests.executor.conftest import (  # noqa: F401  (fixtures)
    APP_TOKEN,
    MASTER,
    Harness,
    HarnessFactory,
    make_harness,
)
from tests.procs import wait_for

__all__ = [
    "PY_SKILL",
    "call_in_turn",
    "listed",
    "provider_of",
    "start_turn",
    "wait_for",
    "write_skill",
]

PY_SKILL = """#!/usr/bin/env python3
import argparse

parser = argparse.ArgumentParser(prog="{name}", description="{summary}")
parser.add_argument("-n", "--number", type=int, required=True, help="a number")
parser.add_argument("--twice", action="store_true", help="say it twice")
args = parser.parse_args()
print(("got %d " % args.number) * (2 if args.twice else 1))
"""


def write_skill(folder: Path, name: str, text: str, *, executable: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    if executable:
        os.chmod(path, 0o755)
    return path


def provider_of(harness: Harness) -> SkillsProvider:
    provider = harness.app.extensions["aios_toolbox"].tools.get("skills")
    assert isinstance(provider, SkillsProvider)
    wait_for(lambda: provider.status()["state"] == "running", 20, "the skills provider")
    return provider


def listed(provider: SkillsProvider) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in provider.status()["skills"]}


@pytest.fixture
def skills_harness(make_harness: HarnessFactory) -> Harness:  # noqa: F811
    harness = make_harness(example_skills=True)
    provider_of(harness)
    return harness


@pytest.fixture
def shared(skills_harness: Harness) -> Path:
    return skills_harness.state_dir / "users" / "default" / "skills"


def call_in_turn(harness: Harness, tool: str, turn: str | None, **args: object) -> dict:
    """`tool` for app1 as the app itself, within the agent loop's request `turn`."""
    body = {"tool": tool, "args": args, "session_id": "sess_turns", "app_id": "app1"}
    if turn:
        body["turn_id"] = turn
    response = harness.client.post("/call", json=body, headers={"X-AIOS-Token": APP_TOKEN})
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def start_turn(harness: Harness, turn: str, parent: str | None = None) -> dict:
    """The agent loop of app1 tells the executor a turn begins: the user's next
    request, or (with `parent`) a background sub-agent's."""
    body = {"turn_id": turn, "session_id": "sess_turns", "app_id": "app1"}
    if parent:
        body["parent_turn_id"] = parent
    response = harness.client.post("/turns", json=body, headers={"X-AIOS-Token": APP_TOKEN})
    return {"http_status": response.status_code, **(response.get_json() or {})}
