"""The loop's tools: what the model is offered and how a proposed call is run.

The offer is the agent's `available_tools()` (the executor's listing for this app,
the one tool source, without the tools that cannot run now), turned into OpenAI function tools, plus the runtime's own `task` tool
(a sub-agent; not offered to a sub-agent). A proposed call is checked here before
anything runs: an unknown tool or arguments that are not a JSON object become an
error result for the model (the parse error kept as the call's result). A valid call is
either *direct* — run now through the executor (`call_tool` for one call, one
`run_steps` plan for several, where consecutive `concurrency_safe` steps may run side by
side) — or *reviewed*: it may need the user's yes (`requires_confirmation`, or a tool
the controller's permission policy inspects), so it goes to the controller as a step
plan that the policy may pause.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aios_sdk.errors import AiosError, ToolFailed

__all__ = [
    "ASK_TOOL",
    "OUTPUT_TOOL",
    "RUNTIME_TOOLS",
    "TASK_TOOL",
    "ProposedCall",
    "ToolBox",
    "ToolOutcome",
    "result_text",
]

TASK_TOOL = "task"
ASK_TOOL = "ask_user"
OUTPUT_TOOL = "task_output"
# the loop's own, not the executor's
RUNTIME_TOOLS = frozenset({TASK_TOOL, ASK_TOOL, OUTPUT_TOOL})
# the tools whose calls controller/permissions/policy.py inspects before a plan runs
POLICY_REVIEWED = frozenset({"file_write", "db_query", "shell_exec", "process_start"})
RESULT_CHARS = 12_000  # a result as the model reads it, at most

TASK_SPEC: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TASK_TOOL,
        "description": (
            "Fork a sub-agent for a self-contained sub-task. It has the same tools and "
            "workspace, works on its own and returns a short summary; its full output "
            "is written to task-outputs/ in the workspace. A sub-agent cannot fork again. "
            "With background: true it runs while you go on; task_output gives its "
            "summary when it is done."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "3-6 words"},
                "prompt": {"type": "string", "description": "the whole sub-task"},
                "background": {"type": "boolean"},
            },
            "required": ["prompt"],
        },
    },
}


OUTPUT_SPEC: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": OUTPUT_TOOL,
        "description": (
            "The summary of a sub-agent started with task(background: true) — by "
            "its task_id, or the latest one: its status (running until it ends), "
            "summary and output file. `wait` seconds (at most 60) waits for it to end."
        ),
        "parameters": {
            "type": "object",
            "properties": {"task_id": {"type": "string"}, "wait": {"type": "number"}},
        },
    },
}

ASK_SPEC: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": ASK_TOOL,
        "description": (
            "Ask the user a question when you cannot go on without their answer (a "
            "choice, a missing detail). The loop waits; their answer is this call's "
            "result. Give `choices` when the answer is one of a few options."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "question": {"type": "string"},
                "choices": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["question"],
        },
    },
}


@dataclass
class ProposedCall:
    """One tool call the model proposed: its id, tool name, raw and parsed arguments."""

    call_id: str
    name: str
    arguments: str
    args: dict[str, Any] | None = None
    error: str = ""  # why it cannot run (unknown tool, broken JSON)
    code: str = ""

    @property
    def valid(self) -> bool:
        return not self.error


@dataclass
class ToolOutcome:
    """What one call came to: `ok` or not, the result (or the error text)."""

    call_id: str
    name: str
    ok: bool
    result: Any = None
    error: str = ""
    code: str = ""

    def for_model(self) -> str:
        """The tool message content the model reads (an error says so)."""
        if self.ok:
            return result_text(self.result)
        return json.dumps(
            {"error": self.error or "failed", "code": self.code or "tool_failed"},
            ensure_ascii=False,
        )


def result_text(result: Any, limit: int = RESULT_CHARS) -> str:
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    if len(text) > limit:
        text = text[:limit] + f"\n…[{len(text) - limit} more characters cut]"
    return text


@dataclass
class ToolBox:
    """The listing of this app's tools and the ways to run them: `call_tool(name,
    **args)` for one call, `run_steps(steps)` (a plan's `tool_results`) for several."""

    call_tool: Callable[..., Any]
    run_steps: Callable[[list[dict[str, Any]]], Mapping[str, Any]] | None = None
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    can_fork: bool = True
    # a skill's allowed-tools for the rest of this request (None: no limit)
    allowed: frozenset[str] | None = None
    prompt: str = ""  # what the tools' providers tell the model (its system prompt)
    # tells the executor a turn begins: (turn_id, parent_turn_id) (None: not told)
    start_turn: Callable[[str, str | None], None] | None = None

    @classmethod
    def from_agent(cls, agent: Any, *, can_fork: bool = True) -> ToolBox:
        """The tools of `agent` (an `AIOSAgent`): its `available_tools()` listing, run
        with its `call_tool` and `run_steps`."""
        if hasattr(agent, "tool_listing"):
            listing, prompt = agent.tool_listing()
        else:
            listing, prompt = getattr(agent, "available_tools", list)(), ""
        box = cls(
            call_tool=agent.call_tool,
            run_steps=getattr(agent, "run_steps", None),
            can_fork=can_fork,
            prompt=str(prompt or ""),
            start_turn=getattr(agent, "start_turn", None),
        )
        for entry in listing:
            if isinstance(entry, Mapping) and entry.get("name"):
                box.entries[str(entry["name"])] = dict(entry)
        return box

    def sub_box(self) -> ToolBox:
        """The same tools for a sub-agent, which cannot fork."""
        return ToolBox(
            self.call_tool,
            self.run_steps,
            dict(self.entries),
            False,
            self.allowed,
            self.prompt,
            self.start_turn,
        )

    # ------------------------------------------------------------------ the offer

    def openai_tools(self) -> list[dict[str, Any]]:
        """Every tool as an OpenAI function tool (plus `task` where forking is allowed)."""
        offered = []
        for name, entry in self.entries.items():
            if self.allowed is not None and name not in self.allowed:
                continue
            schema = entry.get("input_schema") or entry.get("parameters") or {}
            offered.append(
                {
                    "type": "function",
                    "function": {
                        "name": name,
                        "description": str(entry.get("description") or "")[:1000],
                        "parameters": schema or {"type": "object", "properties": {}},
                    },
                }
            )
        if self.can_fork:  # the main agent: it may fork and ask the user
            if self.allowed is None:  # a sub-agent would not be held to a skill's list
                offered.append(TASK_SPEC)
                offered.append(OUTPUT_SPEC)
            offered.append(ASK_SPEC)
        return offered

    # ------------------------------------------------------------------ checking

    def check(self, call_id: str, name: str, arguments: str) -> ProposedCall:
        """The call as proposed, with the reason it cannot run when it cannot."""
        call = ProposedCall(call_id=call_id, name=name, arguments=arguments)
        if name == TASK_TOOL and not self.can_fork:
            call.error, call.code = "a sub-agent cannot fork another sub-agent", "no_fork"
            return call
        if name == OUTPUT_TOOL and not self.can_fork:
            call.error, call.code = "a sub-agent has no background tasks", "no_fork"
            return call
        if name == ASK_TOOL and not self.can_fork:
            call.error = "a sub-agent cannot ask the user: report the question instead"
            call.code = "no_question"
            return call
        limited = self.allowed is not None and name not in (ASK_TOOL, OUTPUT_TOOL)
        if limited and name not in (self.allowed or ()):
            shown = ", ".join(sorted(self.allowed or ())) or "none"
            call.error = f"{name} is not allowed by the skill in use (allowed: {shown})"
            call.code = "not_allowed_by_skill"
            return call
        if name not in RUNTIME_TOOLS and name not in self.entries:
            known = ", ".join(sorted(self.entries)) or "none"
            call.error = f"unknown tool {name!r}; the tools are: {known}"
            call.code = "unknown_tool"
            return call
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            call.error = f"the arguments are not valid JSON ({exc}); send a JSON object"
            call.code = "invalid_args"
            return call
        if not isinstance(parsed, dict):
            call.error = "the arguments must be a JSON object"
            call.code = "invalid_args"
            return call
        call.args = parsed
        return call

    def reviewed(self, call: ProposedCall) -> bool:
        """Whether `call` may need the user's yes (so it goes through the controller)."""
        if call.name in RUNTIME_TOOLS:
            return False
        entry = self.entries.get(call.name, {})
        if entry.get("requires_confirmation"):
            return True
        if call.name == "file_write" and (call.args or {}).get("mode") == "append":
            return False
        return call.name in POLICY_REVIEWED

    def early_tools(self) -> list[str]:
        """The tools whose calls may start while the model still writes: the
        concurrency-safe ones that need nobody's yes (and that a skill allows)."""
        return [
            name
            for name, entry in self.entries.items()
            if entry.get("concurrency_safe") is True
            and not entry.get("requires_confirmation")
            and name not in POLICY_REVIEWED
            and name not in RUNTIME_TOOLS
            and (self.allowed is None or name in self.allowed)
        ]

    def concurrency_safe(self, name: str) -> bool:
        return bool(self.entries.get(name, {}).get("concurrency_safe"))

    # ------------------------------------------------------------------- running

    def run_direct(
        self, calls: Sequence[ProposedCall], session_id: str | None
    ) -> list[ToolOutcome]:
        """Run calls that need nobody's yes: one with `call_tool`, several as one plan."""
        if len(calls) == 1:
            return [self._call_one(calls[0])]
        return self._run_plan(calls, session_id)

    def _call_one(self, call: ProposedCall) -> ToolOutcome:
        try:
            result = self.call_tool(call.name, **(call.args or {}))
        except ToolFailed as exc:
            return ToolOutcome(
                call.call_id, call.name, False, error=exc.message, code=exc.code
            )
        return ToolOutcome(call.call_id, call.name, True, result=result)

    def _run_plan(
        self, calls: Sequence[ProposedCall], session_id: str | None
    ) -> list[ToolOutcome]:
        if self.run_steps is None:
            return [self._call_one(call) for call in calls]
        steps = [
            {"step_id": index, "tool": call.name, "args": call.args or {}}
            for index, call in enumerate(calls, start=1)
        ]
        try:
            results = self.run_steps(steps)
        except (ToolFailed, AiosError) as exc:
            return [
                ToolOutcome(c.call_id, c.name, False, error=exc.message, code=exc.code)
                for c in calls
            ]
        return outcomes_from_results(calls, results, range(1, len(calls) + 1))


def plan_for(calls: Sequence[ProposedCall], first_step: int) -> list[dict[str, Any]]:
    """The step plan of reviewed calls, numbered from `first_step` (unique per turn, so
    two turns proposing the same call are two different plans for the pipeline)."""
    return [
        {"step_id": first_step + index, "tool": call.name, "args": call.args or {}}
        for index, call in enumerate(calls)
    ]


def outcomes_from_results(
    calls: Sequence[ProposedCall], results: Mapping[str, Any], step_ids: Sequence[int]
) -> list[ToolOutcome]:
    """Each call's outcome from a plan's `tool_results` (`step_<id>` keys)."""
    outcomes = []
    for call, step_id in zip(calls, step_ids, strict=False):
        entry = results.get(f"step_{step_id}")
        if not isinstance(entry, Mapping):
            outcomes.append(
                ToolOutcome(
                    call.call_id,
                    call.name,
                    False,
                    error="the step did not run",
                    code="not_run",
                )
            )
        elif entry.get("status") == "ok":
            outcomes.append(ToolOutcome(call.call_id, call.name, True, entry.get("result")))
        else:
            outcomes.append(
                ToolOutcome(
                    call.call_id,
                    call.name,
                    False,
                    error=str(entry.get("error") or entry.get("code") or "failed"),
                    code=str(entry.get("code") or "tool_failed"),
                )
            )
    return outcomes
