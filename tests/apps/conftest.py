"""Fixtures of the reference apps' tests.

The apps' own modules (`music_flows`, `ui_targets`, `code_flows`, …) are imported
by their plain names, as each app's `main.py` does, so their folders go on
`sys.path`; their names are prefixed per app and cannot clash.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.apps.doubles import PlanningAgent
from tests.procs import ROOT

for _app in ("music_app", "code_app", "system_agent"):
    _folder = str(ROOT / "apps" / _app)
    if _folder not in sys.path:
        sys.path.append(_folder)


@pytest.fixture
def planning_agent() -> PlanningAgent:
    return PlanningAgent()


@pytest.fixture(scope="module")
def catalogue() -> Iterator[Any]:
    from tests.fakes.music_api import FakeMusicCatalogue

    with FakeMusicCatalogue() as fake:
        yield fake
