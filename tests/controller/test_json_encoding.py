"""One shared JSON encoder per format (`aios_sdk.wsgi.reusable_encoder`), used by
every hop's body and by the session journal: the same text and the same errors
as the `json.JSONEncoder` it stands for."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from aios_sdk.wsgi import json_bytes, reusable_encoder

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

ENCODERS = [
    json.JSONEncoder(ensure_ascii=False, separators=(",", ":")),
    json.JSONEncoder(ensure_ascii=False, default=str),
    json.JSONEncoder(ensure_ascii=True, sort_keys=False, default=str),
]


@pytest.mark.parametrize("encoder", ENCODERS)
def test_same_text_or_same_error_as_the_encoder(encoder: json.JSONEncoder) -> None:
    encode = reusable_encoder(encoder)
    for value in VALUES:
        try:
            expected: Any = encoder.encode(value)
        except Exception as exc:
            expected = (type(exc), str(exc))
        try:
            got: Any = encode(value)
        except Exception as exc:
            got = (type(exc), str(exc))
        assert got == expected, value


def test_a_cycle_is_still_reported_as_one() -> None:
    cycle: list[Any] = []
    cycle.append({"again": cycle})
    with pytest.raises(ValueError, match="Circular reference"):
        json_bytes(cycle)
    with pytest.raises(ValueError, match="Circular reference"):
        reusable_encoder(json.JSONEncoder(default=str))(cycle)
    assert json_bytes({"after": "a cycle"}) == b'{"after":"a cycle"}'


def test_threads_share_one_encoder() -> None:
    encode = reusable_encoder(json.JSONEncoder(ensure_ascii=False, default=str))
    shared = {"list": list(range(200)), "text": "共享"}
    expected = json.dumps(shared, ensure_ascii=False, default=str)
    wrong: list[str] = []

    def work() -> None:
        for _ in range(300):
            text = encode({"shared": shared, "own": threading.get_ident()})
            if json.loads(text)["shared"] != shared or expected not in text:
                wrong.append(text)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
