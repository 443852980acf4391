"""Fixtures of the skills tests: real skill files, a real executor service, its provider.

`skills_harness` is the executor service (Flask's test client over the real Toolbox,
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

__all__ = ["PY_SKILL", "listed", "provider_of", "wait_for", "write_skill"]

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
