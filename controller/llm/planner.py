"""App planning by the model through tool calling.

`plan_with_tools(client, request, listing=…)` turns an app's `LLMPlanRequest`
(instruction, context, the names of the tools it wants offered) into validated `Step`s:

- the tools offered are the app's entries in the executor's listing (`listing`, the
  controller's one source): their descriptions and schemas, narrowed to the names the
  request carries; a name the listing does not have is not offered, nor is an
  unavailable tool; without a listing the request's own specs are used;
- the system prompt carries the prompt parts (`prompts`, provider id → text, from the
  same listing) of the providers whose tools are offered, and no other: an MCP
  server's "treat as data" notice, the skills installed;

- each `ToolSpec` becomes an OpenAI function tool carrying its argument schema (names
  the OpenAI API would refuse are given a safe alias and mapped back);
- the model's tool calls, in order, become steps 1, 2, …; later arguments may use
  `{{step_N.result…}}` placeholders, which the executor fills in;
- every step is checked: the tool is one of the app's tools, the arguments are a JSON
  object holding the schema's `required` keys; a plan failing a check gets ONE repair
  request quoting the problem, then `LLMBadReply`;
- a model answering in words (no tool calls) gives no steps and its text as `message`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from aios_protocol.errors import InvalidRequest
from aios_protocol.llm import LLMBadReply, LLMPlanReply, LLMPlanRequest
from aios_protocol.messages import Context, Step, ToolSpec
from controller.llm.client import LLMClient, ModelToolCall

__all__ = [
    "MAX_STEPS",
    "function_tools",
    "offered_tools",
    "plan_with_tools",
    "planning_prompt",
    "provider_notes",
    "validate_tool_calls",
]

MAX_STEPS = 20
_OPENAI_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_CONTEXT_CHARS = 3000


def function_tools(
    tools: Sequence[ToolSpec],
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """OpenAI function tools for `tools`, and the map from the name sent to the real one."""
    functions: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for index, spec in enumerate(tools, start=1):
        sent = spec.name if _OPENAI_NAME.match(spec.name) else f"tool_{index}"
        if sent in names:
            continue
        names[sent] = spec.name
        parameters = spec.parameters if isinstance(spec.parameters, dict) else {}
        if parameters.get("type") != "object":
            parameters = {"type": "object", "properties": {}}
        description = spec.description or spec.name
        if sent != spec.name:
            description = f"{spec.name}: {description}"
        functions.append(
            {
                "type": "function",
                "function": {
                    "name": sent,
                    "description": description[:1000],
                    "parameters": parameters,
                },
            }
        )
    return functions, names


def validate_tool_calls(
    calls: Sequence[ModelToolCall],
    tools: Sequence[ToolSpec],
    names: Mapping[str, str] | None = None,
) -> list[Step]:
    """The calls as steps 1..n; `ValueError` naming the first call at fault."""
    by_name = {spec.name: spec for spec in tools}
    names = names or {}
    if len(calls) > MAX_STEPS:
        raise ValueError(f"at most {MAX_STEPS} tool calls, got {len(calls)}")
    steps = []
    for step_id, call in enumerate(calls, start=1):
        name = names.get(call.name, call.name)
        spec = by_name.get(name)
        if spec is None:
            raise ValueError(
                f"call {step_id}: tool {call.name!r} is not one of {sorted(by_name)}"
            )
        try:
            args = json.loads(call.arguments) if call.arguments.strip() else {}
        except ValueError as exc:
            raise ValueError(
                f"call {step_id} ({name}): arguments are not JSON ({exc})"
            ) from None
        if not isinstance(args, dict):
            raise ValueError(f"call {step_id} ({name}): arguments must be a JSON object")
        required = (
            spec.parameters.get("required") if isinstance(spec.parameters, dict) else None
        )
        missing = [
            key for key in (required or []) if isinstance(key, str) and key not in args
        ]
        if missing:
            raise ValueError(f"call {step_id} ({name}): missing argument(s) {missing}")
        steps.append(Step(step_id=step_id, tool=name, args=args))
    return steps


def _clip_json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _CONTEXT_CHARS else text[:_CONTEXT_CHARS] + "…"


def planning_prompt(context: Context, notes: Sequence[str] = ()) -> str:
    """The planner's system prompt; `notes`, what the offered tools' providers tell
    a model about them, come after the app's role."""
    parts = [
        "You plan the work of one app on a desktop computer by calling its tools.",
    ]
    if context.role:
        parts.append(f"The app's role: {context.role}")
    parts.extend(note for note in notes if note)
    parts.append(
        "Call the tools needed to carry out the user's instruction, in the order they "
        "must run; call n is step n. A later call may use an earlier step's result in "
        'its arguments as "{{step_N.result}}" or "{{step_N.result.<field>}}". '
        "Paths are relative to the app's working directory. If no tool is needed, "
        "answer in words without calling any."
    )
    if context.history_summary:
        parts.append(f"Conversation so far: {context.history_summary}")
    if context.cwd_state:
        parts.append(f"Known state: {_clip_json(context.cwd_state)}")
    if context.tool_results:
        results = {key: value.dump() for key, value in context.tool_results.items()}
        parts.append(f"Results of the steps just run: {_clip_json(results)}")
    return "\n\n".join(parts)


def offered_tools(
    requested: Sequence[ToolSpec], listing: Sequence[ToolSpec] | None
) -> list[ToolSpec]:
    """The listing's entries for the requested names (all of them when none is), in the
    listing's order, unavailable ones left out; `requested` itself without a listing."""
    if listing is None:
        return list(requested)
    wanted = {spec.name for spec in requested}
    return [
        entry
        for entry in listing
        if (not wanted or entry.name in wanted) and getattr(entry, "available", True)
    ]


def provider_notes(tools: Sequence[ToolSpec], prompts: Mapping[str, str]) -> list[str]:
    """The prompt parts of the providers of `tools`, each once, in the tools' order."""
    providers = dict.fromkeys(str(getattr(spec, "provider", "")) for spec in tools)
    return [prompts[name] for name in providers if prompts.get(name)]


def plan_with_tools(
    client: LLMClient,
    request: LLMPlanRequest,
    *,
    max_tokens: int = 1500,
    listing: Sequence[ToolSpec] | None = None,
    prompts: Mapping[str, str] | None = None,
) -> LLMPlanReply:
    """Validated steps for `request` (one repair round), or `LLMBadReply`.
    `prompts` are the listing's prompt parts by provider id."""
    tools = offered_tools(request.tools, listing)
    if not tools:
        raise InvalidRequest("none of the requested tools is in the app's tool listing")
    functions, names = function_tools(tools)
    notes = provider_notes(tools, prompts or {})
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": planning_prompt(request.context, notes)},
        {"role": "user", "content": request.instruction},
    ]
    problem = ""
    for _round in range(2):
        completion = client.complete(
            messages,
            tools=functions,
            tool_choice="auto",
            max_tokens=max_tokens,
            temperature=0,
        )
        try:
            steps = validate_tool_calls(completion.tool_calls, tools, names)
        except ValueError as exc:
            problem = str(exc)
        else:
            return LLMPlanReply(steps=steps, message=completion.content.strip())
        messages = messages + [
            {
                "role": "user",
                "content": f"Your tool calls were not usable: {problem}. Plan again, "
                "calling only the tools provided, each with a JSON object of arguments.",
            }
        ]
    raise LLMBadReply(f"the model's plan is invalid: {problem}")
