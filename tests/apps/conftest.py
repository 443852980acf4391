"""Fixtures of the reference apps' tests.

Each shipped app is a package; its modules are imported in-process as
`apps.<app_id>.<module>` (`apps.music_app.flows`), from the repository root.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.apps.doubles import PlanningAgent


@pytest.fixture
def planning_agent() -> PlanningAgent:
    return PlanningAgent()


@pytest.fixture(scope="module")
def catalogue() -> Iterator[Any]:
    from tests.fakes.music_api import FakeMusicCatalogue

    with FakeMusicCatalogue() as fake:
        yield fake
