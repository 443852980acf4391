"""Testing an app in-process: a scripted model and a test client.

    from aios_sdk.testing import AppTestClient, ScriptedModel, call, reply

    model = ScriptedModel([
        reply(tool_calls=[call("convert", {"value": 10, "unit": "m"})]),
        reply(text="10 m is 32.808 ft."),
    ])
    client = AppTestClient(LengthsAgent, model=model)
    answer = client.say("10 metres in feet")        # an AppReply
    assert answer.data["content"] == "10 m is 32.808 ft."

`ScriptedModel` is a model (`aios_sdk.ports.ModelPort`) answering every call — a loop
turn, `chat`, `plan_steps` — with the next reply of its script, and recording what it
was asked (`requests`); a call past the end of the script fails the test
(`UnscriptedCall`). `AppTestClient` drives an agent the way the controller does,
through the app's own HTTP service in-process (Flask's test client, no socket, no
controller, no executor): `open()`, `say(text)`, `click(action_id, **params)` and
`act(action_id, **payload)` return the app's reply after the step plans it asked for
ran (as if the user said yes to any that needed it), and what the app keeps
(`state`) goes into the next call's `context["cwd_state"]`. The client stands in for
the executor: the agent's `call_tool`, `run_steps`, `start_turn` and tool listing are
answered by `tools` (a tool name → a function called with the call's arguments; raise
`ToolFailed` for a failure) and by the agent's own `@tool` methods; any other tool is
not there, and a call of it fails with `unknown_tool` naming the tools there are.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from flask.testing import FlaskClient

from aios_protocol.errors import AiosError, BadAppReply, InvalidRequest, ToolFailed
from aios_protocol.llm import LLMBadReply, LLMNotConfigured, LLMTurnReply, TurnToolCall
from aios_protocol.messages import ActionRequest, AppReply, Context, Language
from aios_protocol.strings import user_message
from aios_sdk.agent import AIOSAgent, numbered_steps, parameters_schema
from aios_sdk.entry import agent_class, import_package
from aios_sdk.ports import ModelPort
from aios_sdk.server import create_app

__all__ = [
    "AppTestClient",
    "ModelRequest",
    "ScriptedModel",
    "UnscriptedCall",
    "call",
    "reply",
]

TOKEN = "aios-test-client"
MAX_STEP_ROUNDS = 3  # step plans per request, as the controller's `max_step_rounds`


class UnscriptedCall(AssertionError):
    """A model call the test's script does not answer: one past the end of the script,
    or a `chat` call whose reply proposes tool calls."""


# ------------------------------------------------------------------ the model


def call(
    name: str, args: Mapping[str, Any] | str | None = None, *, id: str = ""
) -> TurnToolCall:
    """One tool call the model proposes: `call("file_read", {"path": "a.txt"})`.
    `args` as a string is sent as it is (to test arguments that are not JSON)."""
    arguments = args if isinstance(args, str) else json.dumps(dict(args or {}))
    return TurnToolCall(id=id, name=name, arguments=arguments)


def reply(
    text: str = "",
    *,
    tool_calls: Sequence[TurnToolCall] = (),
    reasoning: str = "",
    finish_reason: str | None = None,
) -> LLMTurnReply:
    """One answer of the model: its `text`, or the `tool_calls` it proposes."""
    return LLMTurnReply(
        content=text,
        reasoning=reasoning,
        tool_calls=list(tool_calls),
        finish_reason=finish_reason or ("tool_calls" if tool_calls else "stop"),
    )


@dataclass
class ModelRequest:
    """One call the model got: `kind` (`turn`, `chat` or `plan`), the messages and the
    tools offered (OpenAI function tools for a turn, tool specs for a plan)."""

    kind: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered, in order."""
        names = []
        for tool in self.tools:
            function = tool.get("function")
            spec = function if isinstance(function, Mapping) else tool
            names.append(str(spec.get("name") or ""))
        return names

    @property
    def last_user_text(self) -> str:
        """The content of the last user message (`""` when none)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return str(message.get("content") or "")
        return ""


class ScriptedModel:
    """A model that answers with its script, one reply per call, in order.

    With `available=False` it is no model at all: `available` is False and every call
    raises `LLMNotConfigured`, as without a configured model.
    """

    def __init__(self, script: Iterable[LLMTurnReply] = (), *, available: bool = True):
        self.script = list(script)
        self.requests: list[ModelRequest] = []
        self.events: list[tuple[str, dict[str, Any]]] = []  # progress: (kind, data)
        self._available = available
        self._used = 0
        self._lock = threading.Lock()  # a background sub-agent asks from its thread

    @property
    def available(self) -> bool:
        return self._available

    @property
    def remaining(self) -> int:
        """How many replies of the script are not used yet."""
        return len(self.script) - self._used

    def turn(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] = (),
        max_tokens: int | None = None,
        temperature: float | None = None,
        live_session: str | None = None,
        turn: int = 0,
        early: Mapping[str, Any] | None = None,
    ) -> LLMTurnReply:
        asked = ModelRequest(
            "turn",
            [dict(m) for m in messages],
            [dict(t) for t in tools],
            {"max_tokens": max_tokens, "temperature": temperature},
        )
        return self._next(asked).model_copy(deep=True)

    def chat(
        self,
        messages_or_prompt: str | Sequence[Mapping[str, str]],
        json: bool = False,
        *,
        system: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> str | dict[str, Any]:
        if isinstance(messages_or_prompt, str):
            messages = [{"role": "user", "content": messages_or_prompt}]
        else:
            messages = [dict(m) for m in messages_or_prompt]
        if system:
            messages.insert(0, {"role": "system", "content": system})
        options = {"json": json, "max_tokens": max_tokens, "temperature": temperature}
        answer = self._next(ModelRequest("chat", list(messages), [], options))
        if answer.tool_calls:
            raise UnscriptedCall(
                f"ScriptedModel: reply {self._used} of the script proposes tool calls, "
                "but the app asked for a chat answer (text): script reply(text=...)"
            )
        if not json:
            return answer.content
        return _json_object(answer.content)

    def plan_steps(
        self,
        instruction: str,
        context: Mapping[str, Any] | Context | None = None,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[dict[str, Any]]:
        """The steps of the next reply's tool calls, numbered from 1."""
        if tools is not None:
            offered = [dict(t) for t in tools]
        else:
            ctx = context.dump() if isinstance(context, Context) else dict(context or {})
            offered = [{"name": str(n)} for n in ctx.get("available_tools") or []]
        asked = ModelRequest("plan", [{"role": "user", "content": instruction}], offered)
        answer = self._next(asked)
        steps = [
            {"tool": c.name, "args": _json_object(c.arguments)} for c in answer.tool_calls
        ]
        return numbered_steps(steps)

    def progress(self, session_id: str, kind: str, data: Mapping[str, Any]) -> None:
        with self._lock:
            self.events.append((kind, dict(data)))

    def _next(self, asked: ModelRequest) -> LLMTurnReply:
        if not self._available:
            raise LLMNotConfigured(
                "no model is configured in this test (give the client "
                "model=ScriptedModel([...]) to script one)"
            )
        with self._lock:
            self.requests.append(asked)
            if self._used >= len(self.script):
                said = asked.last_user_text[:200]
                raise UnscriptedCall(
                    f"ScriptedModel: the app asked the model a {_ordinal(self._used + 1)} "
                    f"time ({asked.kind}, last user message {said!r}), but the script "
                    f"has {len(self.script)} repl{'y' if len(self.script) == 1 else 'ies'}"
                    "; add a reply(...) for this call"
                )
            answer = self.script[self._used]
            self._used += 1
            return answer


def _json_object(text: str) -> dict[str, Any]:
    """A reply's text as a JSON object, or `LLMBadReply` as the controller answers."""
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise LLMBadReply(f"the model's answer is not JSON: {text[:200]!r}") from exc
    if not isinstance(value, dict):
        raise LLMBadReply(f"the model's answer is not a JSON object: {text[:200]!r}")
    return value


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# ------------------------------------------------------------- the test client


class AppTestClient:
    """An agent driven in-process as the controller drives it; see the module docstring.

    `agent` is an `AIOSAgent` subclass (made with no arguments) or instance; `model`
    answers its `self.llm` (none: no model is configured); `tools` answers its tool
    calls. `raise_errors` (the default) lets an exception of `handle` — and a reply
    outside the protocol, as `BadAppReply` — reach the test; without it the reply is
    the error view the controller would get. `calls` lists every tool call, in order,
    as `(tool, args)`; `state` is what the app keeps between calls.
    """

    def __init__(
        self,
        agent: AIOSAgent | type[AIOSAgent],
        *,
        model: ModelPort | None = None,
        tools: Mapping[str, Callable[..., Any]] | None = None,
        language: Language = "zh-CN",
        session_id: str = "test_session",
        raise_errors: bool = True,
    ) -> None:
        self.agent = agent() if isinstance(agent, type) else agent
        self.model: ModelPort = (
            model if model is not None else ScriptedModel(available=False)
        )
        self.tools = dict(tools or {})
        self.language: Language = language
        self.session_id = session_id
        self.raise_errors = raise_errors
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.state: dict[str, Any] = {}
        self._raised: BaseException | None = None
        self._stand_in()
        self.http: FlaskClient = create_app(self.agent, token=TOKEN).test_client()
        endpoint = self.agent.manifest().get("handle_endpoint")
        self.endpoint = endpoint if isinstance(endpoint, str) and endpoint else "/handle"

    @classmethod
    def from_folder(cls, folder: str | Path, **options: Any) -> AppTestClient:
        """The client of the app in `folder`: a package (its `__init__.py` exports the
        agent) or a one-file app (`main.py` defines it)."""
        return cls(_agent_of_folder(folder), **options)

    # ----------------------------------------------------------------- calls

    def open(self) -> AppReply:
        """The app's window opening (instruction `""`)."""
        return self.request("", None)

    def say(self, instruction: str) -> AppReply:
        """Something the user said to the app."""
        return self.request(instruction, None)

    def click(self, action_id: str, **params: Any) -> AppReply:
        """A click on a button `action_id` (with the button's `params`)."""
        action: dict[str, Any] = {"action_id": action_id, "type": "button"}
        if params:
            action["params"] = params
        return self.request(None, action)

    def act(self, action_id: str, **payload: Any) -> AppReply:
        """Any control used: `act("volume", value=30)`, `act("save", form_values={…})`
        (the fields of an `ActionRequest`: type, params, form_values, selected,
        checked, value, href, on)."""
        unknown = sorted(set(payload) - set(ActionRequest.model_fields) - {"session_id"})
        if unknown:
            raise TypeError(f"act: {unknown} are not fields of an action request")
        return self.request(None, {"action_id": action_id, **payload})

    def request(
        self, instruction: str | None, action: Mapping[str, Any] | None
    ) -> AppReply:
        """One request as the controller runs it: the app is called, the step plan it
        answers runs, it is called again with the results, until its final reply."""
        results: dict[str, Any] | None = None
        last_plan: list[dict[str, Any]] | None = None
        rounds = 0
        while True:
            answer = self._handle(instruction, action, results, rounds)
            if not answer.steps:
                return answer
            plan = [step.dump() for step in answer.steps]
            if rounds > 0 and (answer.view_type != "loading" or plan == last_plan):
                return answer.model_copy(update={"steps": []})
            if rounds >= MAX_STEP_ROUNDS:
                text = user_message(
                    "too_many_step_rounds",
                    self.language,
                    app=self.agent.name,
                    rounds=MAX_STEP_ROUNDS,
                )
                return AppReply.error("too_many_step_rounds", text)
            rounds += 1
            results = self._run_steps(plan)
            last_plan = plan

    # -------------------------------------------------------------- the app

    def _handle(
        self,
        instruction: str | None,
        action: Mapping[str, Any] | None,
        results: dict[str, Any] | None,
        rounds: int,
    ) -> AppReply:
        context: dict[str, Any] = {
            "role": self.agent.role_prompt,
            "cwd_state": dict(self.state),
            "available_tools": [entry["name"] for entry in self._listing()],
            "session_id": self.session_id,
            "language": self.language,
        }
        if results is not None:
            context["tool_results"] = results
        if rounds:
            context["step_round"] = rounds
        body: dict[str, Any] = {"instruction": instruction, "context": context}
        if action is not None:
            body["action_request"] = dict(action)
        self._raised = None
        response = self.http.post(self.endpoint, json=body, headers={"X-AIOS-Token": TOKEN})
        raised, self._raised = self._raised, None
        if raised is not None and self.raise_errors:
            raise raised
        payload = response.get_json(silent=True)
        if response.status_code != 200 or not isinstance(payload, dict):
            error = (payload or {}).get("error") if isinstance(payload, dict) else None
            message = error.get("message") if isinstance(error, dict) else None
            raise InvalidRequest(
                f"the app refused the request (HTTP {response.status_code}): "
                f"{message or response.get_data(as_text=True)[:300]}"
            )
        answer = AppReply.model_validate(payload)
        problem = answer.data.get("code") == "bad_app_reply" and answer.view_type == "error"
        if problem and self.raise_errors:
            raise BadAppReply(answer.detail or "the app's reply is outside the protocol")
        kept = payload.get("state")
        if isinstance(kept, dict):
            for key, value in kept.items():  # None removes a key, as the controller
                if value is None:
                    self.state.pop(key, None)
                else:
                    self.state[key] = value
        return answer

    def _stand_in(self) -> None:
        """Answer the agent's model and executor calls here (on this instance only)."""
        agent = self.agent
        original = agent.handle

        def handle(*args: Any, **kwargs: Any) -> Any:
            try:
                return original(*args, **kwargs)
            except Exception as exc:  # the server turns it into the error view
                self._raised = exc
                raise

        def call_tool(tool_name: str, **args: Any) -> Any:
            return self._call(tool_name, args)

        def run_steps(steps: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
            return self._run_steps(numbered_steps(steps))

        def start_turn(turn_id: str, parent_turn_id: str | None = None) -> None:
            return None

        def tool_listing() -> tuple[list[dict[str, Any]], str]:
            return self._listing(), ""

        stand_ins: dict[str, Any] = {
            "handle": handle,
            "llm": self.model,
            "call_tool": call_tool,
            "run_steps": run_steps,
            "start_turn": start_turn,
            "tool_listing": tool_listing,
        }
        for name, value in stand_ins.items():
            setattr(agent, name, value)

    # -------------------------------------------------------------- the tools

    def _listing(self) -> list[dict[str, Any]]:
        """The tools of this test as the executor would list them: the fakes, then the
        agent's `@tool` methods."""
        listing = []
        for name, function in self.tools.items():
            try:
                schema = parameters_schema(function)
            except (TypeError, ValueError):  # a callable without a signature
                schema = {"type": "object"}
            doc = inspect.getdoc(function) or ""
            listing.append(
                {
                    "name": name,
                    "description": doc.splitlines()[0] if doc else name,
                    "input_schema": schema,
                    "parameters": schema,
                    "provider": "test",
                    "risk_level": "read",
                    "requires_confirmation": False,
                    "concurrency_safe": False,
                }
            )
        for tool_def in self.agent.custom_tools().values():
            spec = tool_def.spec().dump()
            listing.append({**spec, "input_schema": spec.get("parameters") or {}})
        return listing

    def _call(self, name: str, args: Mapping[str, Any]) -> Any:
        self.calls.append((name, dict(args)))
        if name in self.agent.custom_tools():
            return self._custom(name, args)
        function = self.tools.get(name)
        if function is None:
            there = ", ".join(entry["name"] for entry in self._listing()) or "none"
            raise ToolFailed(
                f"{name}: no such tool in this test (its tools: {there}); give "
                f"AppTestClient(tools={{{name!r}: function}}) to answer it",
                code="unknown_tool",
            )
        return function(**args)

    def _custom(self, name: str, args: Mapping[str, Any]) -> Any:
        """An `@tool` method, through the app's `/tools/<name>` as the executor calls it."""
        response = self.http.post(
            f"/tools/{name}", json={"args": dict(args)}, headers={"X-AIOS-Token": TOKEN}
        )
        payload = response.get_json(silent=True)
        if response.status_code == 200 and isinstance(payload, dict):
            return payload.get("result")
        error = payload.get("error") if isinstance(payload, dict) else None
        if not isinstance(error, dict):
            error = {}
        raise ToolFailed(
            f"{name}: {error.get('message') or f'HTTP {response.status_code}'}",
            code=str(error.get("code") or "tool_failed"),
        )

    def _run_steps(self, plan: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """A step plan's `tool_results`, each step run here in order."""
        results: dict[str, Any] = {}
        for step in plan:
            tool_name = str(step.get("tool") or "")
            entry: dict[str, Any] = {"tool": tool_name, "duration_ms": 0.0}
            try:
                result = self._call(tool_name, dict(step.get("args") or {}))
            except AiosError as exc:
                entry.update(status="error", result=None, error=exc.message, code=exc.code)
            else:
                entry.update(status="ok", result=result)
            results[f"step_{step.get('step_id')}"] = entry
        return results


# ---------------------------------------------------------------- app folders


def _agent_of_folder(folder: str | Path) -> type[AIOSAgent]:
    """The agent class of the app in `folder`: the one its package exports, or, for a
    one-file app, the one its entry (`main.py`) defines."""
    folder = Path(folder).resolve()
    if (folder / "__init__.py").is_file():
        return agent_class(import_package(folder))
    return agent_class(_import_entry(folder / "main.py"))


def _import_entry(path: Path) -> ModuleType:
    """Import a one-file app's `main.py` as a module of its own (never as `__main__`)."""
    if not path.is_file():
        raise ImportError(f"{path.parent} holds neither __init__.py nor main.py")
    name = f"_aios_app_{path.parent.name}"
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(path):
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the agent's class reads its manifest through it
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
