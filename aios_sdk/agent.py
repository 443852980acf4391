"""`AIOSAgent`, the base class of a Triton app ("small AI"), and the `@tool` decorator.

An app subclasses `AIOSAgent`, sets the class attributes `name`, `description`,
`icon` and `role_prompt` (checked when the class is defined) and implements
`handle(instruction, context, action_request=None)`, which returns a reply
dict. Inside `handle` it may call an atomic tool at once with `call_tool` or return a
step plan with `plan_steps` whose results come back in
`context["tool_results"]`. Instead of writing `handle`, an agent may hand every call
to a `Flows` class (`aios_sdk.flows`): `class MusicAgent(AIOSAgent, flows=MusicFlows)`.
Methods decorated with `@tool` become custom tools the executor can run;
their JSON schema is derived from the signature.

Everything an agent needs from its process — `AIOS_APP_ID`, `AIOS_WORKDIR`,
`AIOS_USER_ID` (set in a process that serves one user other than the owner),
`AIOS_APP_SETTINGS`, the executor's URL and token — is read from the environment
when used, not when the class is defined, so the design's own Flask template (which
builds the agent itself and never calls `serve`) works unmodified.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import functools
import inspect
import json
import logging
import os
import re
import sys
import threading
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Union, overload

from pydantic import BaseModel

from aios_protocol.errors import InvalidRequest, ToolFailed
from aios_protocol.messages import ATOMIC_TOOLS, Step, ToolSpec, describe_validation_error
from aios_runtime.users import OWNER

if TYPE_CHECKING:
    from aios_sdk.flows import Flows
    from aios_sdk.ports import ModelPort
    from aios_sdk.runtime.flows import AgentFlows

__all__ = ["AIOSAgent", "ToolDef", "read_role", "step_outcome", "tool"]

REQUIRED_ATTRIBUTES = ("name", "description", "icon", "role_prompt")
TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
LOADING_MESSAGE = "正在处理..."
LOADING_MESSAGE_EN = "Working…"

F = TypeVar("F", bound=Callable[..., Any])

# The session of the `handle` call running in this thread (sent with `call_tool`),
# its available tools and the user's language (for the SDK's own default texts).
_current = threading.local()


@contextlib.contextmanager
def within_turn(turn_id: str | None) -> Iterator[None]:
    """Within the block, this thread's tool calls say they belong to the agent loop's
    request `turn_id` (the executor holds a skill's `allowed-tools` to it)."""
    previous = getattr(_current, "turn_id", None)
    _current.turn_id = turn_id
    try:
        yield
    finally:
        _current.turn_id = previous


@dataclasses.dataclass(frozen=True)
class CallScope:
    """What this thread's tool calls say of the call they serve: its session, the
    agent loop's request (`turn_id`) and the user served (the executor acts for the
    user this process serves, whom its token names, and refuses any other)."""

    session_id: str | None = None
    turn_id: str | None = None
    user_id: str | None = None


_SCOPE_FIELDS = ("session_id", "turn_id", "user_id")


def current_call() -> CallScope:
    """The scope this thread's tool calls belong to."""
    return CallScope(*(getattr(_current, name, None) for name in _SCOPE_FIELDS))


@contextlib.contextmanager
def within_call(scope: CallScope) -> Iterator[None]:
    """Within the block (another thread's, e.g. a background sub-agent's), tool calls
    belong to `scope`: its session, turn and user."""
    previous = current_call()
    for name in _SCOPE_FIELDS:
        setattr(_current, name, getattr(scope, name))
    try:
        yield
    finally:
        for name in _SCOPE_FIELDS:
            setattr(_current, name, getattr(previous, name))


def process_user() -> str:
    """The user this app process serves: `$AIOS_USER_ID` in a process started for one
    user other than the owner, else the owner."""
    return os.environ.get("AIOS_USER_ID") or OWNER


def serving_another_user() -> bool:
    """Whether this thread's call serves a user other than the one this process
    serves (its workspace is then not theirs)."""
    user = getattr(_current, "user_id", None)
    return bool(user) and user != process_user()


def _call_language() -> str:
    """The language of the `handle` call running in this thread (zh-CN outside one)."""
    return getattr(_current, "language", None) or "zh-CN"


# ---------------------------------------------------------------------------- @tool


RiskLevel = Literal["read", "write", "execute", "network", "system"]


@dataclass(frozen=True)
class ToolMeta:
    """What an author states about a tool (the executor enforces it): how risky it
    is, whether calls may run side by side, whether the user must say yes first, how
    much of its result the model reads, and the pydantic model of its input."""

    name: str | None = None
    description: str = ""
    risk_level: RiskLevel | None = None
    concurrency_safe: bool = False
    requires_confirmation: bool = False
    max_result_size_chars: int | None = None
    input: type[BaseModel] | None = None


@dataclass(frozen=True)
class ToolDef:
    """One custom tool of an agent: the method behind it, its argument schema and
    the metadata its author stated."""

    name: str
    description: str
    method: str
    parameters: dict[str, Any]
    meta: ToolMeta = ToolMeta()

    def spec(self) -> ToolSpec:
        stated: dict[str, Any] = {
            "concurrency_safe": self.meta.concurrency_safe,
            "requires_confirmation": self.meta.requires_confirmation,
        }
        if self.meta.risk_level:
            stated["risk_level"] = self.meta.risk_level
        if self.meta.max_result_size_chars:
            stated["max_result_size_chars"] = self.meta.max_result_size_chars
        return ToolSpec.model_validate(
            {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
                "custom": True,
                **stated,
            }
        )


_TOOL_MARK = "__aios_tool__"


@overload
def tool(func: F, **meta: Any) -> F: ...
@overload
def tool(func: None = None, **meta: Any) -> Callable[[F], F]: ...
def tool(func: F | None = None, **meta: Any) -> F | Callable[[F], F]:
    """Register a method as a custom tool: `@tool(name="x", desc="…", …)`.

    `@tool` alone uses the method's name and the first line of its docstring.
    Parameters without a default are required; type hints become JSON types. With
    `input=SomeModel` (a pydantic model) the model's JSON schema is the input schema
    and the method gets one validated `SomeModel`. `risk_level` (`read`, `write`,
    `execute`, `network`, `system`), `concurrency_safe`, `requires_confirmation` and
    `max_result_size_chars` state what the executor enforces for the tool.
    """
    unknown = set(meta) - {
        "name",
        "desc",
        "description",
        "risk_level",
        "concurrency_safe",
        "requires_confirmation",
        "max_result_size_chars",
        "input",
    }
    if unknown:
        raise TypeError(f"@tool: unknown option(s) {sorted(unknown)}")
    name = meta.get("name")
    risk = meta.get("risk_level")
    if risk is not None and risk not in typing.get_args(RiskLevel):
        raise ValueError(
            f"@tool risk_level {risk!r} is not one of {typing.get_args(RiskLevel)}"
        )
    size = meta.get("max_result_size_chars")
    if size is not None and (
        not isinstance(size, int) or isinstance(size, bool) or size < 1
    ):
        raise ValueError("@tool max_result_size_chars must be a positive number")
    model = meta.get("input")
    if model is not None and not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError("@tool input must be a pydantic model class")

    def check(tool_name: str) -> None:
        if not TOOL_NAME.fullmatch(tool_name):
            raise ValueError(
                f"@tool name {tool_name!r} must be letters, digits and '_' "
                "(not starting with a digit, at most 64 characters)"
            )

    if name is not None:
        check(name)

    def mark(method: F) -> F:
        if not callable(method):
            raise TypeError("@tool decorates a method")
        tool_name = name or method.__name__
        check(tool_name)
        doc = inspect.getdoc(method) or ""
        description = (
            meta.get("desc")
            or meta.get("description")
            or (doc.splitlines()[0] if doc else "")
        )
        stated = ToolMeta(
            name=tool_name,
            description=description,
            risk_level=risk,
            concurrency_safe=meta.get("concurrency_safe") is True,
            requires_confirmation=meta.get("requires_confirmation") is True,
            max_result_size_chars=size,
            input=model,
        )
        setattr(method, _TOOL_MARK, stated)
        return method

    if func is not None:
        return mark(func)
    return mark


_JSON_TYPES: dict[Any, str] = {  # bool before int: bool is a subclass of int
    bool: "boolean",
    str: "string",
    int: "integer",
    float: "number",
    dict: "object",
    list: "array",
    tuple: "array",
    set: "array",
    frozenset: "array",
}


def json_schema_of_type(hint: Any) -> dict[str, Any]:
    """The JSON schema of a type hint; `{}` (anything) for hints it cannot map."""
    if hint is inspect.Parameter.empty or hint is Any or hint is None:
        return {}
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        members = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(members) == 1:
            return json_schema_of_type(members[0])
        schemas = [json_schema_of_type(arg) for arg in members]
        return {} if {} in schemas else {"anyOf": schemas}
    if origin is Literal:
        return {"enum": list(typing.get_args(hint))}
    if origin is not None:
        base = _JSON_TYPES.get(origin)
        if base == "array":
            args = typing.get_args(hint)
            item = json_schema_of_type(args[0]) if len(args) == 1 else {}
            return {"type": "array", "items": item} if item else {"type": "array"}
        return {"type": base} if base else {}
    if isinstance(hint, type):
        for python_type, json_type in _JSON_TYPES.items():
            if issubclass(hint, python_type):
                return {"type": json_type}
    return {}


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema (`type: object`) of a pydantic input model."""
    schema = dict(model.model_json_schema())
    schema.pop("title", None)
    schema.setdefault("type", "object")
    return schema


def parameters_schema(method: Callable[..., Any]) -> dict[str, Any]:
    """The JSON schema (`type: object`) of a method's arguments, without `self`."""
    signature = inspect.signature(method)
    try:
        hints = typing.get_type_hints(method)
    except Exception:  # unresolvable string annotations: fall back to "anything"
        hints = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    open_ended = False
    for index, param in enumerate(signature.parameters.values()):
        if index == 0 and param.name in ("self", "cls"):
            continue
        if param.kind is param.VAR_KEYWORD:
            open_ended = True
            continue
        if param.kind is param.VAR_POSITIONAL:
            continue
        schema = json_schema_of_type(hints.get(param.name, param.annotation))
        if param.default is param.empty:
            required.append(param.name)
        else:
            try:
                json.dumps(param.default)
                schema = {**schema, "default": param.default}
            except (TypeError, ValueError):
                pass
        properties[param.name] = schema
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    parameters["additionalProperties"] = open_ended
    return parameters


# ----------------------------------------------------------------------- the agent


class AIOSAgent(abc.ABC):
    """Base class of a Triton app. Subclass it, set the four attributes, write `handle`.

    A subclass that defines `handle` — or names the `Flows` class that answers its
    calls, `class NotesAgent(AIOSAgent, flows=NotesFlows)` — is concrete and must set
    `name`, `description`, `icon` and `role_prompt` (non-empty strings); a shared base
    class that should not be checked says so with `class Base(AIOSAgent, abstract=True)`.
    """

    name: str = ""
    description: str = ""
    icon: str = ""
    role_prompt: str = ""
    # True: with a model configured the app answers with the agent loop
    # (`aios_sdk.runtime`), its role prompt and its own tools; its flows (if any)
    # answer when there is no model. Also the manifest's `"agent": true`.
    agent: bool = False
    # The `AgentFlows` subclass that runs this app's loop (the runtime's own when
    # None); an app whose flows start the loop names it, so it answers the loop's
    # resumed calls.
    agent_flows: type[AgentFlows] | None = None
    # Seconds `call_tool` waits for the executor (tools have their own timeouts).
    call_timeout: float = 300.0

    # The `Flows` class answering this agent's calls (set with `flows=`), or None.
    flows: Callable[[AIOSAgent], Flows] | None = None

    _aios_tools: dict[str, ToolDef] = {}

    def __init_subclass__(
        cls,
        abstract: bool = False,
        flows: Callable[[AIOSAgent], Flows] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        _identity_from_manifest(cls)
        if flows is not None:
            if "handle" in cls.__dict__:
                raise TypeError(f"{cls.__name__}: write handle or set flows=, not both")
            cls.flows = flows
            cls.handle = _handle_with_flows  # type: ignore[method-assign]
        elif cls.agent and "handle" not in cls.__dict__ and cls.flows is None:
            cls.handle = _handle_with_flows  # type: ignore[method-assign]
        if "handle" in cls.__dict__:
            cls.handle = _tracking_session(cls.__dict__["handle"])  # type: ignore[method-assign]
        cls._aios_tools = _collect_tools(cls)
        if abstract or getattr(cls.handle, "__isabstractmethod__", False):
            return
        missing = [
            attr
            for attr in REQUIRED_ATTRIBUTES
            if not isinstance(getattr(cls, attr, None), str) or not getattr(cls, attr)
        ]
        if missing:
            names = ", ".join(repr(attr) for attr in missing)
            raise TypeError(
                f"{cls.__name__} must set the class attribute{'s' * (len(missing) > 1)} "
                f"{names} (a non-empty string each; required by every AIOSAgent)"
            )

    @abc.abstractmethod
    def handle(
        self,
        instruction: str | None,
        context: dict[str, Any],
        action_request: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Answer one call: a reply dict with `status`, `view_type`, `data`.

        `instruction` is the user's text (`""` when the desktop opens the app's window,
        `None` with an action); `context` holds `role`, `workdir`, `cwd_state`,
        `available_tools`, `session_id`, `history_summary` and, after a step plan
        ran, `tool_results`; `action_request` is `None` on a first call, else
        `{"action_id": …, "params"/"value"/…: …}`.
        """

    # ------------------------------------------------------------ process environment

    @property
    def app_id(self) -> str:
        """`$AIOS_APP_ID`, or the class name in lower case when run by hand."""
        return os.environ.get("AIOS_APP_ID") or type(self).__name__.lower()

    @property
    def workdir(self) -> Path | None:
        """`$AIOS_WORKDIR`: the absolute path of the app's workspace (the sandbox root).

        A process serving a user other than the owner has that user's workspace here
        (and sees no other); None while a call names a user this process does not
        serve."""
        if serving_another_user():
            return None
        value = os.environ.get("AIOS_WORKDIR")
        return Path(value) if value else None

    @property
    def settings(self) -> dict[str, Any]:
        """This app's settings (`config.json` `app_settings.<app_id>`), or `{}`."""
        raw = os.environ.get("AIOS_APP_SETTINGS", "")
        if not raw.strip():
            return {}
        try:
            value = json.loads(raw)
        except ValueError:
            self.log.warning("AIOS_APP_SETTINGS is not valid JSON; using {}")
            return {}
        return value if isinstance(value, dict) else {}

    @functools.cached_property
    def llm(self) -> ModelPort:
        """The app's way to the LLM (`aios_sdk.llm.AgentLLM`): `chat` and `plan_steps`
        through the controller, which alone holds the API key. Typed as the
        `ModelPort` it fills, which a test's `aios_sdk.testing.ScriptedModel` fills too."""
        from aios_sdk.llm import AgentLLM

        return AgentLLM()

    @property
    def log(self) -> logging.Logger:
        """The app's logger, `aios.app.<app_id>`."""
        return logging.getLogger(f"aios.app.{self.app_id}")

    # ------------------------------------------------------------------------ tools

    def call_tool(self, tool_name: str, **args: Any) -> Any:
        """Run one atomic (or custom) tool now and return its `result`.

        Raises `aios_protocol.errors.ToolFailed` (`.code`, `.message`) when the tool fails,
        the executor refuses the call or cannot be reached, or the app was not started
        by the system (`code="not_connected"`).
        """
        from aios_sdk.client import client_from_env

        check_tool_names([tool_name])
        client = client_from_env(timeout=self.call_timeout)
        return client.call(
            tool_name,
            args,
            app_id=os.environ.get("AIOS_APP_ID") or None,
            session_id=getattr(_current, "session_id", None),
            turn_id=getattr(_current, "turn_id", None),
            user_id=getattr(_current, "user_id", None),
        )

    def start_turn(self, turn_id: str, parent_turn_id: str | None = None) -> None:
        """Tell the executor the agent loop's turn `turn_id` begins (see
        `ExecutorClient.start_turn`), for this call's session and user."""
        from aios_sdk.client import client_from_env

        client = client_from_env(timeout=self.call_timeout)
        client.start_turn(
            turn_id,
            parent_turn_id=parent_turn_id,
            app_id=os.environ.get("AIOS_APP_ID") or None,
            session_id=getattr(_current, "session_id", None),
            user_id=getattr(_current, "user_id", None),
        )

    def plan_steps(
        self, steps: Iterable[Mapping[str, Any] | Step], message: str | None = None
    ) -> dict[str, Any]:
        """A `loading` reply carrying `steps` for the executor.

        The results arrive in the next call's `context["tool_results"]`, keyed
        `"step_<id>"`. Steps without a `step_id` are numbered after the previous one.
        A tool outside the call's `available_tools` raises `ToolFailed` (`unknown_tool`).
        Without `message` the reply says "正在处理..." (in English "Working…", when
        the call's `context["language"]` is en-US).
        """
        planned = numbered_steps(steps)
        check_tool_names(step["tool"] for step in planned)
        if message is None:
            english = _call_language() == "en-US"
            message = LOADING_MESSAGE_EN if english else LOADING_MESSAGE
        return {
            "status": "ok",
            "view_type": "loading",
            "data": {},
            "actions": [],
            "message": message,
            "steps": planned,
        }

    @staticmethod
    def tool_results(context: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
        """`context["tool_results"]`, or `{}` on a first call."""
        return dict((context or {}).get("tool_results") or {})

    def step_result(self, context: Mapping[str, Any] | None, step_id: int) -> Any:
        """The `result` of step `step_id` from `context`; `ToolFailed` if it failed."""
        entry = self.tool_results(context).get(f"step_{step_id}")
        if entry is None:
            raise ToolFailed(f"step {step_id} has no result", code="missing_result")
        if entry.get("status") != "ok":
            raise ToolFailed(
                f"step {step_id} ({entry.get('tool')}): {entry.get('error') or 'failed'}",
                code=entry.get("code") or "tool_failed",
            )
        return entry.get("result")

    @classmethod
    def custom_tools(cls) -> dict[str, ToolDef]:
        """This agent's `@tool` methods by tool name."""
        return dict(cls._aios_tools)

    def run_custom_tool(self, tool_name: str, args: Mapping[str, Any]) -> Any:
        """Run the tool with `args`; `KeyError` if unknown.

        The executor checks `args` against the tool's listed schema before it calls
        the app; here Python's own binding refuses a missing or unknown argument
        (`InvalidRequest` naming it) before the method runs.
        """
        tool_def = self._aios_tools[tool_name]
        method = getattr(self, tool_def.method)
        if tool_def.meta.input is not None:
            from pydantic import ValidationError

            try:
                value = tool_def.meta.input.model_validate(dict(args))
            except ValidationError as exc:
                raise InvalidRequest(
                    f"{tool_name}: {describe_validation_error(exc)}"
                ) from exc
            return method(value)
        try:
            inspect.signature(method).bind(**args)
        except TypeError as exc:
            raise InvalidRequest(f"{tool_name}: {exc}") from exc
        return method(**args)

    def available_tools(self) -> list[dict[str, Any]]:
        """The tools this app may call now (`ToolInfo` dicts from the executor's
        listing, filtered by the manifest; the ones that cannot run are left out);
        `[]` when the executor cannot be reached."""
        return self.tool_listing()[0]

    def tool_listing(self) -> tuple[list[dict[str, Any]], str]:
        """`available_tools()` and what the tools' providers tell a model about them
        (for an agent's system prompt; `""` when none or unreachable), as the user
        this call serves sees them."""
        from aios_sdk.client import client_from_env

        try:
            listing, prompt = client_from_env(timeout=30).listing(
                os.environ.get("AIOS_APP_ID")
            )
        except ToolFailed as exc:
            self.log.warning("no tool listing: %s", exc.message)
            return [], ""
        known = getattr(_current, "available_tools", None)
        usable = [
            entry
            for entry in listing
            if entry.get("available", True) is not False
            and (not known or str(entry.get("name")) in known)
        ]
        return usable, prompt

    def run_steps(self, steps: Iterable[Mapping[str, Any] | Step]) -> dict[str, Any]:
        """Run a step plan now, through the executor (its confinement, its consent
        checks, its audit log); the plan's `tool_results` (`step_<id>` keys). A step
        that needs the user's yes fails with `needs_confirmation`: plan such steps
        with `plan_steps`, so the user is asked."""
        from aios_sdk.client import client_from_env

        planned = numbered_steps(steps)
        check_tool_names(step["tool"] for step in planned)
        client = client_from_env(timeout=self.call_timeout)
        return client.run(
            planned,
            app_id=os.environ.get("AIOS_APP_ID") or None,
            session_id=getattr(_current, "session_id", None),
            turn_id=getattr(_current, "turn_id", None),
            user_id=getattr(_current, "user_id", None),
        )

    # --------------------------------------------------------------------- manifest

    def app_folder(self) -> Path | None:
        """The folder of the module that defines this agent (where manifest.json is)."""
        module = inspect.getmodule(type(self))
        path = getattr(module, "__file__", None)
        return Path(path).resolve().parent if path else None

    def manifest(self) -> dict[str, Any]:
        """`manifest.json` beside the agent's module, completed from the class."""
        data: dict[str, Any] = {}
        folder = self.app_folder()
        if folder is not None and (folder / "manifest.json").is_file():
            try:
                loaded = json.loads((folder / "manifest.json").read_text("utf-8"))
                data = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError) as exc:
                self.log.warning("cannot read manifest.json: %s", exc)
        for attr in REQUIRED_ATTRIBUTES:
            if not data.get(attr):
                data[attr] = getattr(self, attr)
        data.setdefault("entry", "main.py")
        data.setdefault("handle_endpoint", "/handle")
        return data


def numbered_steps(steps: Iterable[Mapping[str, Any] | Step]) -> list[dict[str, Any]]:
    """Validate steps as `protocol.Step`, numbering those without a `step_id`."""
    from pydantic import ValidationError

    if isinstance(steps, Mapping | str | bytes):
        raise InvalidRequest("steps must be a list of {tool, args} objects")
    planned: list[dict[str, Any]] = []
    used: set[int] = set()
    next_id = 1
    for index, raw in enumerate(steps):
        item = raw.dump() if isinstance(raw, Step) else raw
        if not isinstance(item, Mapping):
            raise InvalidRequest(
                f"steps[{index}]: must be an object, got {type(item).__name__}"
            )
        item = dict(item)
        if item.get("step_id") is None:
            item["step_id"] = next_id
        try:
            step = Step.model_validate(item)
        except ValidationError as exc:
            raise InvalidRequest(
                f"steps[{index}]: {describe_validation_error(exc)}"
            ) from exc
        if step.step_id < 1 or step.step_id in used:
            raise InvalidRequest(
                f"steps[{index}].step_id: {step.step_id} is "
                + ("used twice" if step.step_id in used else "not a positive number")
            )
        used.add(step.step_id)
        next_id = max(next_id, step.step_id + 1)
        planned.append(step.dump())
    return planned


def _handle_with_flows(
    self: AIOSAgent,
    instruction: str | None,
    context: dict[str, Any],
    action_request: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`handle` of an agent declared with `flows=` or `agent = True`: the agent loop
    answers what is its (with a model), a new `Flows` everything else."""
    flows = type(self).flows  # a class (or function) taking the agent
    loop = type(self).agent_flows
    if loop is None and type(self).agent:
        from aios_sdk.runtime.flows import AgentFlows

        loop = AgentFlows
    if loop is not None and (
        flows is None
        or loop.owns(self, instruction, context, action_request, said=type(self).agent)
    ):
        return loop(self).handle(instruction, context, action_request)
    assert flows is not None
    return flows(self).handle(instruction, context, action_request)


def _identity_from_manifest(cls: type[AIOSAgent]) -> None:
    """Fill `name`, `description`, `icon`, `role_prompt` (and `agent`) the class does
    not set from `manifest.json` beside its module (`role.md` for the role prompt)."""
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if not path:
        return
    folder = Path(path).resolve().parent
    manifest = folder / "manifest.json"
    try:
        loaded = json.loads(manifest.read_text("utf-8")) if manifest.is_file() else {}
    except (OSError, ValueError):
        loaded = {}
    data = loaded if isinstance(loaded, dict) else {}
    if not data.get("role_prompt") and (folder / "role.md").is_file():
        data["role_prompt"] = (folder / "role.md").read_text("utf-8").strip()
    for attr in REQUIRED_ATTRIBUTES:
        if not getattr(cls, attr, None) and isinstance(data.get(attr), str):
            setattr(cls, attr, data[attr])
    if data.get("agent") is True and "agent" not in cls.__dict__:
        cls.agent = True


def _tracking_session(handle: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap `handle` so `call_tool` knows the session of the call it serves (and the
    SDK's default texts its language)."""
    if getattr(handle, "__aios_tracks_session__", False):
        return handle

    @functools.wraps(handle)
    def tracked(self: AIOSAgent, *args: Any, **kwargs: Any) -> Any:
        context = kwargs.get("context", args[1] if len(args) > 1 else None)
        previous = getattr(_current, "session_id", None)
        previous_tools = getattr(_current, "available_tools", None)
        previous_language = getattr(_current, "language", None)
        previous_user = getattr(_current, "user_id", None)
        if not isinstance(context, Mapping):
            context = {}
        if context.get("session_id"):
            _current.session_id = str(context["session_id"])
        # the user this call serves: the executor works in their sandbox
        _current.user_id = str(context.get("user_id") or "") or None
        tools = context.get("available_tools")
        _current.available_tools = (
            frozenset(map(str, tools)) if isinstance(tools, list) and tools else None
        )
        _current.language = "en-US" if context.get("language") == "en-US" else "zh-CN"
        try:
            return handle(self, *args, **kwargs)
        finally:
            _current.session_id = previous
            _current.available_tools = previous_tools
            _current.language = previous_language
            _current.user_id = previous_user

    tracked.__aios_tracks_session__ = True  # type: ignore[attr-defined]
    return tracked


def check_tool_names(names: Iterable[str]) -> None:
    """Raise `ToolFailed` (`unknown_tool`) for a name outside the call's `available_tools`
    (the executor's listing as injected); no check outside a call or without it."""
    known = getattr(_current, "available_tools", None)
    if not known:
        return
    unknown = sorted({name for name in names if name not in known})
    if unknown:
        raise ToolFailed(
            f"unknown tool(s) {unknown}: not in this app's available_tools {sorted(known)}",
            code="unknown_tool",
        )


def _collect_tools(cls: type) -> dict[str, ToolDef]:
    found: dict[str, ToolDef] = {}
    seen: set[str] = set()
    for klass in cls.__mro__:
        for attr, value in vars(klass).items():
            if attr in seen:
                continue
            seen.add(attr)
            mark = getattr(value, _TOOL_MARK, None)
            if mark is None:
                continue
            stated: ToolMeta = mark
            tool_name = stated.name or attr
            if tool_name in ATOMIC_TOOLS:
                raise TypeError(
                    f"{cls.__name__}.{attr}: @tool name {tool_name!r} is an atomic tool"
                )
            if tool_name in found:
                raise TypeError(
                    f"{cls.__name__}: two @tool methods named {tool_name!r} "
                    f"({found[tool_name].method} and {attr})"
                )
            schema = (
                model_schema(stated.input)
                if stated.input is not None
                else parameters_schema(value)
            )
            found[tool_name] = ToolDef(
                name=tool_name,
                description=stated.description,
                method=attr,
                parameters=schema,
                meta=stated,
            )
    return found


def step_outcome(
    results: Mapping[str, Any], step_id: int, language: str | None = None
) -> tuple[bool, Any, str]:
    """`(ok, result, reason)` of step `step_id` in a `tool_results` mapping.

    For flows that answer a failed step gracefully instead of raising (compare
    `AIOSAgent.step_result`): `reason` is the tool's error, its code, or "没有执行"
    ("did not run" when `language` — by default the call's — is en-US) when the
    step did not run. The reason is technical: show it as a reply's `detail`.
    """
    entry = results.get(f"step_{step_id}") or {}
    if entry.get("status") == "ok":
        return True, entry.get("result"), ""
    english = (language or _call_language()) == "en-US"
    not_run = "did not run" if english else "没有执行"
    return False, None, str(entry.get("error") or entry.get("code") or not_run)


def read_role(module_file: str) -> str:
    """The role prompt kept in `role.md` beside `module_file` (the manifest allows it
    to live there
    instead of the manifest): `role_prompt = read_role(__file__)`."""
    return (
        (Path(module_file).resolve().parent / "role.md").read_text(encoding="utf-8").strip()
    )
