"""Fixtures of the users' tests: the executor service of `tests/executor/conftest.py`."""

from __future__ import annotations

from tests.executor.conftest import (  # noqa: F401  (fixtures)
    harness,
    make_harness,
)
