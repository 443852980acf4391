"""`aios_runtime.json_client.json_bytes`, every hop's body: compact JSON as `json.dumps`
writes it, and the same errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aios_runtime.json_client import json_bytes

VALUES: list[Any] = [
    0,
    -1.5,
    10**30,
    float("nan"),
    float("-inf"),
    'é\n\u2028"\\',
    None,
    True,
    [],
    {},
    (1, "two"),
    {"a": [1, {"b": None}], 3: "int key", 2.5: "float key", None: 0, False: 1},
    {"path": Path("/tmp/x")},  # only with default=str
]


def test_a_cycle_is_still_reported_as_one() -> None:
    cycle: list[Any] = []
    cycle.append({"again": cycle})
    with pytest.raises(ValueError, match="Circular reference"):
        json_bytes(cycle)
    assert json_bytes({"after": "a cycle"}) == b'{"after":"a cycle"}'


def test_json_bytes_is_compact_json_dumps() -> None:
    for value in VALUES[:-1]:  # a Path is not JSON without default=str
        expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        assert json_bytes(value) == expected.encode("utf-8"), value
