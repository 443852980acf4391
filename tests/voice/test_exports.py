"""Each voice module's `__all__` names exactly its public classes and functions."""

from __future__ import annotations

import importlib
import inspect

import pytest

MODULES = [
    "voice.output",
    "voice.input",
    "voice.audio",
    "voice.engines",
    "voice.grammar",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_is_complete(name: str) -> None:
    module = importlib.import_module(name)
    exported = set(module.__all__)
    assert all(hasattr(module, attr) for attr in exported)
    defined = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__ == name
    }
    assert defined - exported == set()
