"""The atomic tools' argument schemas (S-60): one definition listed by `GET /tools` and
checked by `jsonschema`, with messages that name the argument at fault (pure logic)."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator, SchemaError

from aios_protocol.messages import ATOMIC_TOOLS
from executor.tools.catalog import ATOMIC_SCHEMAS, ATOMIC_SPECS, ArgumentSchema, InvalidArgs


def refusal(tool: str, **args: Any) -> str:
    with pytest.raises(InvalidArgs) as err:
        ATOMIC_SCHEMAS[tool].check(args)
    assert err.value.code == "invalid_args"
    return err.value.message


def test_the_listing_and_the_check_are_one_valid_schema_per_tool() -> None:
    assert tuple(ATOMIC_SPECS) == tuple(ATOMIC_SCHEMAS) == ATOMIC_TOOLS
    for name, spec in ATOMIC_SPECS.items():
        assert ATOMIC_SCHEMAS[name].schema is spec.parameters
        Draft202012Validator.check_schema(spec.parameters)
        assert spec.parameters["additionalProperties"] is False
        assert ATOMIC_SCHEMAS[name].declares("timeout")


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        (
            "file_write",
            {"path": "x.txt"},
            "file_write: missing required argument 'content'",
        ),
        (
            "file_write",
            {"path": "x", "content": "a", "contents": "b"},
            "file_write: unknown argument 'contents' (allowed: path, content, mode, "
            "encoding, timeout)",
        ),
        (
            "shell_exec",
            {"cmd": 5},
            "shell_exec: argument 'cmd' must be string or array, got integer",
        ),
        (
            "shell_exec",
            {"cmd": ["ls", 5]},
            "shell_exec: argument 'cmd[1]' must be string, got integer",
        ),
        (
            "notify",
            {"title": "x", "level": "loud"},
            "notify: argument 'level' must be one of ['info', 'success', 'warning', 'error']",
        ),
        (
            "file_list",
            {"recursive": 1},
            "file_list: argument 'recursive' must be boolean, got integer",
        ),
        (
            "cache_set",
            {"key": "k", "value": 1, "ttl": True},
            "cache_set: argument 'ttl' must be number or null, got boolean",
        ),
        (
            "http_request",
            {"url": "u", "headers": []},
            "http_request: argument 'headers' must be object, got array",
        ),
        (
            "file_read",
            {"path": "a", "timeout": "soon"},
            "file_read: argument 'timeout' must be number, got string",
        ),
    ],
)
def test_a_refusal_names_the_argument_at_fault(
    tool: str, args: dict[str, Any], message: str
) -> None:
    assert refusal(tool, **args) == message


def test_missing_then_unknown_then_bad_values_come_first() -> None:
    assert (
        refusal("file_write", contents=5, mode="x")
        == "file_write: missing required argument 'path'"
    )
    assert refusal("file_write", path="a", content="", zz=1, mode="x").startswith(
        "file_write: unknown argument 'zz'"
    )


def test_null_for_an_optional_argument_counts_as_left_out() -> None:
    ATOMIC_SCHEMAS["file_read"].check({"path": "a.txt", "encoding": None})
    ATOMIC_SCHEMAS["http_request"].check({"url": "https://x", "save_to": None})
    assert (
        refusal("file_read", path=None)
        == "file_read: argument 'path' must be string, got null"
    )
    assert refusal("file_read", path="a", nonsense=None).startswith(
        "file_read: unknown argument 'nonsense'"
    )


def test_a_custom_schema_is_checked_as_a_schema_then_compiled() -> None:
    with pytest.raises(SchemaError):
        ArgumentSchema("broken", {"type": "objekt"})
    shout = ArgumentSchema(
        "shout",
        {
            "type": "object",
            "properties": {
                "word": {"type": "string"},
                "times": {"type": "integer", "minimum": 1},
            },
            "required": ["word"],
            "additionalProperties": False,
        },
    )
    shout.check({"word": "hi", "times": 2})
    with pytest.raises(InvalidArgs) as err:
        shout.check({"word": "hi", "times": 0})
    assert err.value.message == "shout: argument 'times': 0 is less than the minimum of 1"
    with pytest.raises(InvalidArgs, match="argument 'times' must be integer, got boolean"):
        shout.check({"word": "hi", "times": True})
    assert not shout.declares("timeout")


# values of every JSON type, and the edges where validators tend to differ
_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    1.5,
    2**70,
    "",
    "x",
    "workspace/a b",
    "ü" * 3,
    [],
    ["a"],
    [1],
    ["a", "a"],
    {},
    {"a": 1},
    {"method": "GET"},
]

_OWN_SCHEMAS: dict[str, dict[str, Any]] = {
    "nested": {
        "type": "object",
        "properties": {
            "mode": {"enum": ["a", "b"]},
            "one": {"const": 1},
            "size": {"type": "number", "exclusiveMinimum": 0, "maximum": 10},
            "tags": {
                "type": "array",
                "items": {"type": "string", "pattern": "^[a-z]+$"},
                "minItems": 1,
                "maxItems": 2,
                "uniqueItems": True,
            },
            "either": {"anyOf": [{"type": "integer"}, {"type": "string", "minLength": 2}]},
            "only": {"oneOf": [{"type": "number"}, {"type": "integer"}]},
            "meta": {
                "type": "object",
                "additionalProperties": {"type": "integer"},
                "minProperties": 1,
            },
            "not_null": {"not": {"type": "null"}},
        },
        "required": ["mode"],
    },
}


def _cases(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Every property alone with every value, all required ones set (to their first
    good value), plus unknown keys."""
    properties = schema.get("properties", {})
    names = list(properties)
    required = {
        name: next(
            v for v in ["a", *_VALUES] if Draft202012Validator(properties[name]).is_valid(v)
        )
        for name in schema.get("required", [])
    }
    cases: list[dict[str, Any]] = [{}, required, {**required, "unknown": 1}]
    for name in names:
        cases.extend({**required, name: value} for value in _VALUES)
    return cases


@pytest.mark.parametrize(
    "schema",
    [spec.parameters for spec in ATOMIC_SPECS.values()] + list(_OWN_SCHEMAS.values()),
    ids=[*ATOMIC_SPECS, *_OWN_SCHEMAS],
)
def test_the_fast_check_agrees_with_jsonschema_on_every_case(
    schema: dict[str, Any],
) -> None:
    compiled = ArgumentSchema("probe", schema)
    fast = compiled._passes
    assert fast is not None, "every schema here is written in the shared keyword subset"
    judge = Draft202012Validator(schema)
    cases = _cases(schema)
    disagreements = [c for c in cases if fast(c) != judge.is_valid(c)]
    assert not disagreements
    # and both outcomes occur: the corpus tells good arguments from bad ones
    assert {judge.is_valid(c) for c in cases} == {True, False}


def test_multiple_of_is_left_to_jsonschema() -> None:
    """fastjsonschema would pass 0.3 as a multiple of 0.1; jsonschema does not."""
    tenths = ArgumentSchema(
        "tenths",
        {"type": "object", "properties": {"x": {"type": "number", "multipleOf": 0.1}}},
    )
    assert tenths._passes is None
    with pytest.raises(InvalidArgs, match="argument 'x'"):
        tenths.check({"x": 0.3})


def test_a_schema_outside_the_shared_keywords_is_checked_by_jsonschema_alone() -> None:
    pair = ArgumentSchema(
        "pair",
        {
            "type": "object",
            "$defs": {"n": {"type": "integer"}},
            "properties": {"xy": {"type": "array", "prefixItems": [{"$ref": "#/$defs/n"}]}},
        },
    )
    assert pair._passes is None
    pair.check({"xy": [1, "any"]})
    with pytest.raises(
        InvalidArgs, match=r"argument 'xy\[0\]' must be integer, got string"
    ):
        pair.check({"xy": ["1"]})


def test_a_refusal_still_names_the_fault_when_the_fast_check_ran() -> None:
    schema = ATOMIC_SCHEMAS["cache_set"]
    assert schema._passes is not None
    assert not schema._passes({"key": 5})
    assert refusal("cache_set", key=5, value=1) == (
        "cache_set: argument 'key' must be string, got integer"
    )
