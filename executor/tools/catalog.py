"""The check of a tool call's arguments against its JSON schema.

Each atomic tool has one JSON schema, declared in `aios_protocol.tools`: `GET /tools`
lists it, and an `ArgumentSchema` compiled from the same schema (a `jsonschema` Draft 2020-12
validator, the schema itself checked when it is defined) validates every call, so
the listing and the check never drift apart; apps' custom tools are checked by the
same class against the schema they registered. A break raises `InvalidArgs`
(`invalid_args`) naming the argument at fault. A schema written only with keywords
that mean the same in Draft 7 and Draft 2020-12 and that both libraries check alike
(`FAST_KEYWORDS`) is also compiled to Python by `fastjsonschema`, which passes good
arguments about fifteen times sooner; `jsonschema` stays the judge: it alone
rejects, and it names the fault. An optional argument given as `null` counts as
left out. Every atomic tool also accepts `timeout` (seconds),
which may lower the configured per-tool timeout but never raise it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

import fastjsonschema
from jsonschema import Draft202012Validator, ValidationError

from aios_protocol.errors import AiosError
from aios_protocol.tools import ATOMIC_SPECS, CONTROLLER_SPECS, atomic_specs

__all__ = [
    "ATOMIC_SCHEMAS",
    "ATOMIC_SPECS",
    "ArgumentSchema",
    "InvalidArgs",
    "atomic_specs",
]


class InvalidArgs(AiosError):
    code = "invalid_args"
    http_status = 400


def _json_type(value: Any) -> str:
    """The JSON type name of a parsed JSON value (a bool is not an integer)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    for python_type, name in (
        (float, "number"),
        (str, "string"),
        (dict, "object"),
        (list, "array"),
    ):
        if isinstance(value, python_type):
            return name
    return type(value).__name__


log = logging.getLogger("aios.executor")

# keywords whose meaning Draft 7 (fastjsonschema's newest) and Draft 2020-12 share;
# `format` is an annotation in both (no format checker runs), `default` is not
# applied; not `multipleOf`: fastjsonschema passes 0.3 as a multiple of 0.1
FAST_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minProperties",
        "maxProperties",
        "anyOf",
        "allOf",
        "oneOf",
        "not",
        "title",
        "description",
        "default",
        "examples",
        "format",
        "$comment",
    }
)


def _fast_subset(schema: Any) -> bool:
    """True when every (sub)schema of `schema` uses `FAST_KEYWORDS` only."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, Mapping) or not set(schema) <= FAST_KEYWORDS:
        return False
    subschemas = list((schema.get("properties") or {}).values())
    for key in ("additionalProperties", "items", "not"):
        if key in schema:
            subschemas.append(schema[key])
    for key in ("anyOf", "allOf", "oneOf"):
        subschemas.extend(schema.get(key) or [])
    # `items` as a list means tuples in Draft 7 but is no schema in 2020-12
    return not isinstance(schema.get("items"), list) and all(map(_fast_subset, subschemas))


def _fast_check(tool: str, schema: Mapping[str, Any]) -> Callable[[Any], bool] | None:
    """A compiled `args -> passes` for a schema of the shared subset, else None."""
    if not _fast_subset(schema):
        return None
    try:
        validate = fastjsonschema.compile(
            dict(schema), use_default=False, use_formats=False
        )
    except Exception:  # fastjsonschema cannot take it: jsonschema alone checks it
        log.info("tool %s: its schema is checked by jsonschema alone", tool)
        return None

    def passes(args: Any) -> bool:
        try:
            validate(args)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    return passes


def _where(error: ValidationError) -> str:
    """The argument an error is about: `cmd`, `cmd[1]`, `headers.Accept`."""
    where = ""
    for part in error.absolute_path:
        if isinstance(part, int):
            where += f"[{part}]"
        else:
            where += f".{part}" if where else str(part)
    return where


def _rank(error: ValidationError) -> tuple[int, int, str]:
    """Missing arguments first, then unknown ones, then the shallowest bad value."""
    order = {"required": 0, "additionalProperties": 1}.get(str(error.validator), 2)
    return order, len(error.absolute_path), _where(error)


class ArgumentSchema:
    """One tool's argument schema, checked as a schema and compiled once.

    `Draft202012Validator.check_schema` raises `jsonschema.SchemaError` for a
    schema that is not valid JSON Schema; `check` raises `InvalidArgs` whose message
    names the tool and the argument at fault.
    """

    def __init__(self, tool: str, schema: Mapping[str, Any]):
        Draft202012Validator.check_schema(schema)
        self.tool = tool
        self.schema = schema
        self._validator = Draft202012Validator(schema)
        properties = schema.get("properties")
        self._properties: dict[str, Any] = dict(properties or {})
        self._optional = frozenset(self._properties) - frozenset(schema.get("required", ()))

    @cached_property
    def _passes(self) -> Callable[[Any], bool] | None:
        """The fast check, compiled on first use (many listed tools are never called)."""
        return _fast_check(self.tool, self.schema)

    def check_compiled(self) -> None:
        """Compile the fast check now rather than on the first `check`."""
        _ = self._passes

    def declares(self, name: str) -> bool:
        """True when the schema lists the argument `name`."""
        return name in self._properties

    def check(self, args: Mapping[str, Any]) -> None:
        """Raise `InvalidArgs` naming the argument at fault when `args` breaks the schema."""
        given = {k: v for k, v in args.items() if v is not None or k not in self._optional}
        if self._passes is not None and self._passes(given):
            return
        errors = sorted(self._validator.iter_errors(given), key=_rank)
        if errors:
            raise InvalidArgs(f"{self.tool}: {self._describe(errors[0])}")

    def _describe(self, error: ValidationError) -> str:
        # both set on every error a validator yields (types-jsonschema allows `Unset`)
        instance: Any = error.instance
        wanted: Any = error.validator_value
        if error.validator == "required" and isinstance(instance, dict):
            missing = [name for name in wanted if name not in instance]
            return f"missing required argument {missing[0]!r}"
        if error.validator == "additionalProperties" and not error.absolute_path:
            unknown = sorted(set(instance) - set(self._properties))
            allowed = ", ".join(self._properties) or "none"
            return f"unknown argument {unknown[0]!r} (allowed: {allowed})"
        where = f"argument {_where(error)!r}" if error.absolute_path else "args"
        if error.validator == "type":
            types = [wanted] if isinstance(wanted, str) else list(wanted)
            return f"{where} must be {' or '.join(types)}, got {_json_type(instance)}"
        if error.validator == "enum":
            return f"{where} must be one of {wanted}"
        message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
        return f"{where}: {message}"


ATOMIC_SCHEMAS: dict[str, ArgumentSchema] = {
    name: ArgumentSchema(name, spec.parameters) for name, spec in ATOMIC_SPECS.items()
}


CONTROLLER_SCHEMAS: dict[str, ArgumentSchema] = {
    name: ArgumentSchema(name, spec.parameters) for name, spec in CONTROLLER_SPECS.items()
}
