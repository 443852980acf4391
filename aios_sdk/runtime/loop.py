"""The agent loop: the model proposes, the runtime acts.

`AgentLoop.start(instruction)` appends the user's message and runs turns: the model
context is fitted into the window (`compaction`), the model answers one turn through
the controller (`AgentLLM.turn`, its text streamed to the desktop), every proposed
call is checked (`tools.ToolBox.check`) and run — direct calls now, `task` calls as
sub-agents, reviewed calls as a step plan for the controller — and the results go
back into the model context. A turn without tool calls passes the stop hooks and is
the answer. The loop ends with an `Outcome`: `answer`; `plan` (reviewed calls wait
behind placeholders, the request is in `conversation.pending` with the id of the
message that asked; `resume(results)` replaces that message's placeholders with the
real results and goes on); `stopped` (`max_turns`
reached); `error` (the model failed beyond recovery; its reason is the `detail`).
What the loop itself says to the user is in their language (`tr`, a `Turn.tr`).
Progress goes to `progress`; a `retry` event says whether what that turn's attempt
streamed is `discarded` (asked again from the same history) or kept (a cut-off answer
the model continues: the answer joins all its parts, in order).
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from aios_sdk.agent import within_turn
from aios_sdk.errors import AiosError, ToolFailed, user_message_of
from aios_sdk.ports import ModelPort
from aios_sdk.runtime import background
from aios_sdk.runtime.compaction import Compactor, calibrated, summary_prompt
from aios_sdk.runtime.hooks import RECOVERY_MESSAGE, STOP_HOOK_ROUNDS, Recovery, StopHook
from aios_sdk.runtime.messages import Conversation, StreamEvent, for_model
from aios_sdk.runtime.tools import (
    ASK_TOOL,
    OUTPUT_TOOL,
    RUNTIME_TOOLS,
    TASK_TOOL,
    ProposedCall,
    ToolBox,
    ToolOutcome,
    outcomes_from_results,
    plan_for,
)

__all__ = ["SKILL_TOOL", "AgentLoop", "LoopSettings", "Outcome"]

SKILL_TOOL = "skill"  # the skills provider's: its result names the allowed tools
TOO_LONG = "llm_context_too_long"
REACTIVE_COMPACTIONS = 3  # compact-and-retry rounds of one model turn

FORK_MARK = "<fork-boilerplate>"
NOT_ANSWERED = "not answered: the user moved on to something else without answering"
DENIED_BY_USER = "denied_by_user"  # a step the user said no to (the controller's code)
Progress = Callable[[StreamEvent], None]


@dataclass(frozen=True)
class LoopSettings:
    max_turns: int = 12
    context_window: int = 32_000
    max_tokens: int = 2048
    plan_rounds: int = 3  # plans for the controller per request (its max_step_rounds)
    sub_agent_turns: int = 8

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> LoopSettings:
        def number(key: str, default: int, low: int, high: int) -> int:
            try:
                return max(low, min(high, int(settings.get(key, default))))
            except (TypeError, ValueError):
                return default

        return cls(
            max_turns=number("max_turns", cls.max_turns, 1, 100),
            context_window=number("context_window", cls.context_window, 1000, 2_000_000),
            max_tokens=number("max_tokens", cls.max_tokens, 16, 65536),
            plan_rounds=number("plan_rounds", cls.plan_rounds, 1, 20),
            sub_agent_turns=number("sub_agent_turns", cls.sub_agent_turns, 1, 50),
        )

    def within(self, asked: Any) -> LoopSettings:
        """These settings with `max_turns` lowered to `asked` (a caller's wish, e.g.
        an OpenAI client's `max_turns`), never raised above the configured cap."""
        try:
            turns = int(asked)
        except (TypeError, ValueError):
            return self
        if turns < 1:
            return self
        return replace(self, max_turns=min(self.max_turns, turns))


@dataclass
class Outcome:
    kind: str  # answer | plan | question | stopped | error
    text: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)
    choices: list[str] = field(default_factory=list)  # of a question
    code: str = ""
    detail: str = ""  # the technical reason of an error


def _narrowed(held: list[str] | None, allowed: Any) -> list[str] | None:
    """A skill's `allowed` list within what already `held` the turn (None: no limit);
    a hold is never loosened, as the executor's (`executor/skills/scope.py`)."""
    if not isinstance(allowed, list):
        return held
    names = [str(name) for name in allowed]
    return names if held is None else [name for name in names if name in held]


def _not_followed(outcome: ToolOutcome) -> ToolOutcome:
    """A `skill` call that waited behind a call for the user's yes ran in the
    controller's plan, outside this request's turn: nothing holds the model to the
    skill's tools there, so its steps are not given; the model may use it again."""
    if not outcome.ok:
        return outcome
    return ToolOutcome(
        outcome.call_id,
        outcome.name,
        False,
        code="not_run",
        error="the skill was not followed: it waited behind a call for the user's "
        "confirmation; use the skill again to follow it",
    )


def _refused_by_user(messages: list[dict[str, Any]]) -> list[str]:
    """Why each call of a sub-agent the user said no to did not run (its tool results
    after its task, not those of the parent's context it was forked from)."""
    start = max(
        (i for i, m in enumerate(messages) if FORK_MARK in str(m.get("content") or "")),
        default=0,
    )
    refused = []
    for message in messages[start:]:
        if message.get("role") != "tool":
            continue
        try:
            result = json.loads(str(message.get("content") or ""))
        except ValueError:
            continue
        if isinstance(result, dict) and result.get("code") == DENIED_BY_USER:
            refused.append(str(result.get("error") or DENIED_BY_USER)[:300])
    return refused


def _in_place(pending: Mapping[str, Any], outcomes: list[ToolOutcome]) -> list[ToolOutcome]:
    """The results of the waiting calls of `pending` (`outcomes`, in its order) and of
    the calls that repeated them, in the order the model proposed them: two calls of
    one id get their results in turn."""
    placed = [
        (int(call.get("place", index)), outcome)
        for index, (call, outcome) in enumerate(
            zip(pending.get("calls", []), outcomes, strict=False)
        )
    ]
    placed += _copies(pending.get("duplicates"), placed)
    return [outcome for _, outcome in sorted(placed, key=lambda found: found[0])]


def _copies(
    duplicates: Any, placed: list[tuple[int, ToolOutcome]]
) -> list[tuple[int, ToolOutcome]]:
    """The results of the calls that repeated a waiting call (the same tool and
    arguments): its result, under their own ids, each with its place in the message.
    `placed` is the waiting calls' results by place."""
    copies = []
    if isinstance(duplicates, Mapping):  # kept before calls had places: id → id
        by_id = {outcome.call_id: outcome for _, outcome in placed}
        for extra, (copy, original) in enumerate(duplicates.items(), start=len(placed)):
            if original in by_id:
                copies.append((extra, replace(by_id[original], call_id=str(copy))))
        return copies
    by_place = dict(placed)
    for entry in duplicates if isinstance(duplicates, list) else []:
        first = by_place.get(entry.get("of", -1)) if isinstance(entry, Mapping) else None
        if first is not None:
            copies.append((int(entry["place"]), replace(first, call_id=str(entry["id"]))))
    return copies


@dataclass
class _Batch:
    """The calls of one assistant message as they are sorted and run, each known by
    its place in the message (a model may give two calls of one message one id)."""

    calls: list[ProposedCall]
    done: dict[int, ToolOutcome] = field(default_factory=dict)
    direct: list[int] = field(default_factory=list)  # run now, nobody's yes needed
    reviewed: list[int] = field(default_factory=list)  # wait for the user's yes
    question: int | None = None  # the `ask_user` call to ask
    paused: dict[str, Any] | None = None  # a sub-agent waiting for the user
    duplicates: dict[int, int] = field(default_factory=dict)  # → the same earlier call
    first_of: dict[tuple[str, str], int] = field(default_factory=dict)

    def repeats(self, place: int) -> bool:
        """Whether the call at `place` is the same (tool and arguments) as an earlier
        call of the message, whose result it gets."""
        call = self.calls[place]
        if not call.valid or call.name in RUNTIME_TOOLS:
            return False
        key = (call.name, json.dumps(call.args or {}, sort_keys=True))
        if key in self.first_of:
            self.duplicates[place] = self.first_of[key]
            return True
        self.first_of[key] = place
        return False

    def share(self) -> None:
        """Each repeated call gets the result of the call it repeats, when it has one."""
        for copy, original in self.duplicates.items():
            if original in self.done:
                call_id = self.calls[copy].call_id
                self.done[copy] = replace(self.done[original], call_id=call_id)


@dataclass
class AgentLoop:
    llm: ModelPort  # aios_sdk.llm.AgentLLM, or a test's ScriptedModel
    tools: ToolBox
    conversation: Conversation
    system_prompt: str
    tr: Callable[[str, str], str]  # the user's language: `Turn.tr(zh, en)`
    language: str = "zh-CN"  # the same, for the sentences of error codes
    session_id: str = ""
    settings: LoopSettings = field(default_factory=LoopSettings)
    progress: Progress = lambda event: None
    stop_hooks: list[StopHook] = field(default_factory=list)
    write_output: Callable[[str, str], str] | None = None  # (name, text) → path
    read_output: Callable[[str], str | None] | None = None  # name → text, None: none
    sub_agent: bool = False
    # a sub-agent whose calls that need the user's yes pause the parent (a foreground
    # fork that is its message's only call, a skill's fork when nothing else of its
    # message waits); others are refused such calls
    pauses_parent: bool = False
    turns: int = 0

    def __post_init__(self) -> None:
        self.recovery = Recovery(self.settings.max_tokens)
        self.continued: list[str] = []  # parts of a cut-off answer the model goes on from
        self.hook_rounds = 0
        self.compactor = Compactor(self.settings.context_window, self._summarize)

    def _emit(self, kind: str, data: Mapping[str, Any]) -> None:
        self.progress(StreamEvent(kind, dict(data)))

    # ------------------------------------------------------------------ entry

    def start(self, instruction: str) -> Outcome:
        if not self.sub_agent:  # a new request: a new turn id, no skill's limit
            self.conversation.turn_id = uuid.uuid4().hex[:16]
            self.conversation.allowed_tools = None
            self._announce(self.conversation.turn_id)  # the holds before it end
        self.conversation.ensure_system(self.system_prompt)
        self.conversation.add_user(instruction, display=not self.sub_agent)
        self._emit("start", {"instruction": instruction[:500]})
        return self.run()

    def resume(self, results: Mapping[str, Any]) -> Outcome:
        """The reviewed calls ran (or were denied): their real results replace the
        placeholders, and the loop goes on where it paused."""
        pending = self.conversation.pending or {}
        self.conversation.pending = None
        self.turns = int(pending.get("turns") or 0)
        asker = str(pending.get("asked_by") or "")
        if pending.get("kind") == "fork":  # a sub-agent's call waited: it goes on
            with within_turn(self.conversation.turn_id or None):
                return self._resume_fork(pending, results)
        calls = [
            ProposedCall(c["id"], c["name"], "", c.get("args") or {})
            for c in pending.get("calls", [])
        ]
        outcomes = [
            _not_followed(outcome) if outcome.name == SKILL_TOOL else outcome
            for outcome in outcomes_from_results(calls, results, pending.get("steps", []))
        ]
        for outcome in _in_place(pending, outcomes):
            text = outcome.for_model()
            self.conversation.replace_placeholder(
                outcome.call_id, outcome.name, text, ok=outcome.ok, asked_by=asker
            )
            self._report_result(outcome, asker)
        return self.run()

    def cancel_pending(self, reason: str) -> None:
        """The user moved on without answering: the waiting calls did not run (the
        question the loop asked, if it asked one, was not answered)."""
        pending = self.conversation.pending
        if not pending:
            return
        self.conversation.pending = None
        asker = str(pending.get("asked_by") or "")
        if pending.get("kind") == "question":
            outcome = ToolOutcome(
                str(pending.get("call_id") or ""),
                ASK_TOOL,
                False,
                error=NOT_ANSWERED,
                code="not_answered",
            )
            self.conversation.replace_placeholder(
                outcome.call_id, ASK_TOOL, outcome.for_model(), ok=False, asked_by=asker
            )
        if pending.get("kind") == "fork":  # the forked call waited with its sub-agent
            name = str(pending.get("tool") or TASK_TOOL)
            outcome = ToolOutcome(
                str(pending.get("call_id")), name, False, error=reason, code="not_confirmed"
            )
            self.conversation.replace_placeholder(
                outcome.call_id, name, outcome.for_model(), ok=False, asked_by=asker
            )
        outcomes = [
            ToolOutcome(call["id"], call["name"], False, error=reason, code="not_confirmed")
            for call in pending.get("calls", [])
        ]
        for outcome in _in_place(pending, outcomes):
            self.conversation.replace_placeholder(
                outcome.call_id, outcome.name, outcome.for_model(), ok=False, asked_by=asker
            )

    # ------------------------------------------------------------------- turns

    def run(self) -> Outcome:
        """Turns until an answer, a pause or the limit; tool calls carry the turn id."""
        allowed = self.conversation.allowed_tools
        if allowed is not None:
            self.tools.allowed = frozenset(allowed)
        with within_turn(self.conversation.turn_id or None):
            return self._turns()

    def _turns(self) -> Outcome:
        while self.turns < self.settings.max_turns:
            self.turns += 1
            self._emit("turn", {"turn": self.turns})
            reply = self._ask_model()
            if isinstance(reply, Outcome):
                return reply
            if reply is None:  # recovered by continuing: a turn of its own
                continue
            continued, self.continued = self.continued, []
            calls = [
                self.tools.check(c.id or f"call_{self.turns}_{i}", c.name, c.arguments)
                for i, c in enumerate(reply.tool_calls, start=1)
            ]
            message = self.conversation.add_assistant(
                reply.content,
                [
                    {"id": c.call_id, "name": c.name, "arguments": c.arguments}
                    for c in calls
                ],
                reasoning=str(getattr(reply, "reasoning", "") or ""),
                display=not self.sub_agent,
            )
            if not calls:
                problem = self._check_answer(reply.content)
                if problem:
                    self.conversation.add_user(problem, display=False)
                    self._emit("stop_hook", {"problem": problem})
                    continue
                answer = "".join([*continued, reply.content])  # a continued answer whole
                self._emit("done", {"status": "ok", "text": answer[:4000]})
                return Outcome("answer", answer)
            early = getattr(reply, "early_results", None)
            plan = self._run_calls(
                message.id, calls, early if isinstance(early, Mapping) else {}
            )
            if plan is not None:
                return plan
        turns = self.settings.max_turns
        text = self.tr(
            f"已达到最多 {turns} 轮，先停在这里；说“继续”可以接着做。",
            f'Stopped after {turns} turns; say "continue" to go on.',
        )
        self.conversation.add_assistant(text, [])
        self._emit("done", {"status": "stopped", "text": text})
        return Outcome("stopped", text, code="max_turns")

    def _ask_model(self) -> Any:
        """One model turn with the bounded recoveries: the reply, None (continued
        after a cut-off answer) or an error `Outcome`."""
        conversation = self.conversation
        offered = self.tools.openai_tools()
        max_tokens = self.settings.max_tokens
        too_long = 0
        while True:
            fitted, done = self.compactor.fit(
                conversation.model_messages, offered, conversation.calibration
            )
            conversation.model_messages = fitted
            if "summary" in done or "trim" in done or "truncate" in done:
                conversation.compactions += 1
                self._emit("compact", {"steps": done})
            try:
                reply = self.llm.turn(
                    for_model(fitted),
                    tools=offered,
                    max_tokens=max_tokens,
                    live_session=None if self.sub_agent else self.session_id or None,
                    turn=self.turns,
                    **self._early(),
                )
            except AiosError as exc:
                if exc.code == TOO_LONG and too_long < REACTIVE_COMPACTIONS:
                    too_long += 1  # compact harder, learn that we count too low, retry
                    fitted, done = self.compactor.reactive(
                        fitted, offered, conversation.calibration, too_long
                    )
                    conversation.model_messages = fitted
                    conversation.calibration = min(conversation.calibration * 1.5, 8.0)
                    conversation.compactions += 1
                    self._emit("compact", {"steps": done, "reason": TOO_LONG})
                    continue
                if self.recovery.connection(exc.code):  # what it streamed is dropped
                    self._emit(
                        "retry", {"reason": exc.code, "turn": self.turns, "discarded": True}
                    )
                    time.sleep(0.2 * self.recovery.used)
                    continue
                text = user_message_of(exc, self.language)
                self._emit("done", {"status": "error", "text": text})
                return Outcome(
                    "error", text, code=exc.code, detail=f"{exc.code}: {exc.message}"
                )
            prompt_tokens = int(reply.usage.get("prompt_tokens") or 0)
            if prompt_tokens:
                conversation.calibration = calibrated(
                    conversation.calibration, prompt_tokens, fitted, offered
                )
                conversation.last_prompt_tokens = prompt_tokens
            if reply.finish_reason == "length" and self.recovery.can_recover():
                how, max_tokens = self.recovery.cut_off()
                discarded = how == "escalate"  # nothing kept: asked again with room
                self._emit(
                    "retry",
                    {
                        "reason": "length",
                        "how": how,
                        "turn": self.turns,
                        "discarded": discarded,
                    },
                )
                if discarded:
                    continue
                self.continued.append(reply.content)  # the answer's first part
                conversation.add_assistant(reply.content, [])
                conversation.add_user(RECOVERY_MESSAGE, display=False)
                return None
            return reply

    def _check_answer(self, answer: str) -> str | None:
        if self.hook_rounds >= STOP_HOOK_ROUNDS:
            return None
        for hook in self.stop_hooks:
            problem = hook(answer)
            if problem:
                self.hook_rounds += 1
                return problem
        return None

    # ------------------------------------------------------------------- tools

    def _early(self) -> dict[str, Any]:
        """What the model client may start while the model writes: the calls of the
        concurrency-safe tools this loop runs directly (an empty dict: none)."""
        names = self.tools.early_tools()
        if not names:
            return {}
        early = {
            "tools": names,
            "session_id": self.session_id or None,
            "turn_id": self.conversation.turn_id or None,
        }
        return {"early": early}

    def _run_calls(
        self,
        asker: str,
        calls: list[ProposedCall],
        early: Mapping[str, Any] | None = None,
    ) -> Outcome | None:
        """Run the calls of the message `asker` in the order proposed: a call the same
        as an earlier one (tool and arguments) runs once, both get its result; once a
        call waits for the user, every later tool call waits with it, in the same
        plan. Each call has a result of its own, in its place, even when the model
        gave two calls of the message one id. Each result (or placeholder) names
        `asker`, and so does the pause."""
        batch = _Batch(calls)
        for place, call in enumerate(calls):
            self._emit(
                "tool_call",
                {
                    "id": call.call_id,
                    "message_id": asker,
                    "name": call.name,
                    "arguments": call.arguments[:4000],
                },
            )
            if not batch.repeats(place):
                self._sort(batch, place, asker)
        self._run_direct(batch, early or {})
        if batch.question is not None and batch.reviewed:
            question = calls[batch.question]
            batch.done[batch.question] = ToolOutcome(
                question.call_id,
                question.name,
                False,
                code="not_now",
                error="not asked: other calls wait for the user's confirmation; ask "
                "after they ran",
            )
            batch.question = None
        batch.share()
        self._record(batch, asker)
        if batch.question is not None:
            return self._ask(calls[batch.question], asker)
        if batch.paused is not None:
            return self._pause_for_fork(batch.paused, asker)
        if not batch.reviewed:
            return None
        return self._pause_for_plan(batch, asker)

    def _sort(self, batch: _Batch, place: int, asker: str) -> None:
        """The call at `place`: answered now when it cannot run or the runtime itself
        runs it, else put with the calls that run directly, that wait for the
        user's yes, or the question to ask."""
        call = batch.calls[place]
        if not call.valid:
            batch.done[place] = ToolOutcome(
                call.call_id, call.name, False, error=call.error, code=call.code
            )
        elif call.name == TASK_TOOL:
            forked = self._fork(call, asker, may_pause=len(batch.calls) == 1)
            if isinstance(forked, ToolOutcome):
                batch.done[place] = forked
            else:
                batch.paused = forked
        elif call.name == OUTPUT_TOOL:
            batch.done[place] = self._task_output(call)
        elif call.name == ASK_TOOL:
            if (
                batch.question is None
                and str((call.args or {}).get("question") or "").strip()
            ):
                batch.question = place
            else:
                batch.done[place] = ToolOutcome(
                    call.call_id,
                    call.name,
                    False,
                    code="invalid_args",
                    error="ask one question at a time, with a non-empty `question`",
                )
        elif batch.reviewed or self.tools.reviewed(call):
            refused = self._refused(call)
            if refused is not None:
                batch.done[place] = refused
            else:
                batch.reviewed.append(place)
        else:
            batch.direct.append(place)

    def _run_direct(self, batch: _Batch, early: Mapping[str, Any]) -> None:
        """Run the calls that need nobody's yes, but those started while the model
        wrote (`early`, by call id: a call whose id another call of the message
        has too runs here); a skill used is followed, or forked."""
        ids = Counter(call.call_id for call in batch.calls)
        waiting = []
        for place in batch.direct:
            call = batch.calls[place]
            entry = early.get(call.call_id) if ids[call.call_id] == 1 else None
            if isinstance(entry, Mapping):
                [batch.done[place]] = outcomes_from_results([call], {"step_1": entry}, [1])
            else:
                waiting.append(place)
        if not waiting:
            return
        ran = self.tools.run_direct(
            [batch.calls[place] for place in waiting], self.session_id or None
        )
        for place, outcome in zip(waiting, ran, strict=True):
            batch.done[place] = outcome
            used = outcome.result if outcome.name == SKILL_TOOL and outcome.ok else None
            if isinstance(used, Mapping):
                self._used_skill(batch, place, used)

    def _used_skill(self, batch: _Batch, place: int, used: Mapping[str, Any]) -> None:
        """A skill the model used (the call at `place`): its `allowed-tools` hold from
        now on or, marked `context: fork`, a sub-agent follows it — one that may
        pause the request when nothing else of the message waits."""
        if used.get("context") != "fork":
            self._follow_skill(used)
            return
        alone = not batch.reviewed and batch.question is None and batch.paused is None
        alone = alone and place not in batch.duplicates.values()
        forked = self._skill_fork(batch.done[place], used, may_pause=alone)
        if isinstance(forked, ToolOutcome):
            batch.done[place] = forked
        else:
            del batch.done[place]
            batch.paused = forked

    def _record(self, batch: _Batch, asker: str) -> None:
        """Each call's result in the context, in the order proposed (a placeholder for
        one that waits)."""
        for place, call in enumerate(batch.calls):
            outcome = batch.done.get(place)
            if outcome is None:
                self.conversation.add_placeholder(call.call_id, asked_by=asker)
                continue
            self.conversation.add_tool_result(
                call.call_id,
                call.name,
                outcome.for_model(),
                ok=outcome.ok,
                asked_by=asker,
                shown=not self.sub_agent,
            )
            self._report_result(outcome, asker)

    def _pause_for_plan(self, batch: _Batch, asker: str) -> Outcome:
        """The calls waiting for the user's yes as a step plan for the controller; the
        loop waits with them (the request in `conversation.pending`, each call by
        its place in the message)."""
        reviewed = [batch.calls[place] for place in batch.reviewed]
        steps = plan_for(reviewed, first_step=self.turns * 100 + 1)
        if self.sub_agent and self.conversation.turn_id:
            for step in steps:  # run after the yes, still in the sub-agent's turn
                step["turn_id"] = self.conversation.turn_id
        self.conversation.pending = {
            "turns": self.turns,
            "asked_by": asker,
            "calls": [
                {"id": c.call_id, "name": c.name, "args": c.args, "place": place}
                for place, c in zip(batch.reviewed, reviewed, strict=True)
            ],
            "steps": [s["step_id"] for s in steps],
            "duplicates": [
                {"id": batch.calls[copy].call_id, "place": copy, "of": original}
                for copy, original in batch.duplicates.items()
                if original not in batch.done
            ],
            "created": round(time.time(), 3),
        }
        self.conversation.plan_rounds += 1
        self._emit(
            "pause",
            {
                "message_id": asker,
                "calls": [
                    {"id": c.call_id, "name": c.name, "arguments": c.arguments[:2000]}
                    for c in reviewed
                ],
            },
        )
        return Outcome("plan", steps=steps)

    def _follow_skill(self, used: Mapping[str, Any]) -> None:
        """A skill's `allowed-tools` hold for the rest of this request (the executor
        holds the calls of this turn to them too)."""
        names = _narrowed(self.conversation.allowed_tools, used.get("allowed_tools"))
        if names is not None:
            self.conversation.allowed_tools = names
            self.tools.allowed = frozenset(names)

    def _announce(self, turn_id: str, parent: str | None = None) -> str:
        """Tell the executor the turn `turn_id` begins (the user's request, or a
        background sub-agent's of `parent`); the turn id. Untold, the executor holds
        the turn's calls to every hold in force for the session: never looser."""
        if self.tools.start_turn is not None:
            try:
                self.tools.start_turn(turn_id, parent)
            except (ToolFailed, AiosError):
                pass  # fails safe: the turn's calls stay held to the holds in force
        return turn_id

    def _refused(self, call: ProposedCall) -> ToolOutcome | None:
        """Why a call that needs the user's yes cannot wait for it here, or None."""
        if self.sub_agent and not self.pauses_parent:
            return ToolOutcome(
                call.call_id,
                call.name,
                False,
                code="needs_confirmation",
                error="this call needs the user's yes, which a sub-agent cannot "
                "ask for: report what should run to the main agent",
            )
        if self.conversation.plan_rounds >= self.settings.plan_rounds:
            return ToolOutcome(
                call.call_id,
                call.name,
                False,
                code="round_limit",
                error="not run: this request reached its limit of confirmed "
                "plans; tell the user to say 继续 to go on",
            )
        return None

    def _ask(self, call: ProposedCall, asker: str) -> Outcome:
        """Stop, waiting for the user's answer to `call` (`ask_user`) of the message
        `asker`."""
        args = call.args or {}
        question = str(args.get("question") or "").strip()
        raw = args.get("choices")
        choices = (
            [str(c) for c in raw if str(c).strip()][:10] if isinstance(raw, list) else []
        )
        self.conversation.pending = {
            "kind": "question",
            "turns": self.turns,
            "asked_by": asker,
            "call_id": call.call_id,
            "question": question,
            "choices": choices,
            "created": round(time.time(), 3),
        }
        self.conversation.add_question(question, choices)
        self._emit("awaiting_user_input", {"question": question, "choices": choices})
        return Outcome("question", question, choices=choices)

    def answer(self, text: str) -> Outcome:
        """The user's answer to the question the loop waits on: the `ask_user` call's
        result, and the loop goes on."""
        pending = self.conversation.pending or {}
        self.conversation.pending = None
        self.turns = int(pending.get("turns") or 0)
        call_id = str(pending.get("call_id") or "")
        result = json.dumps({"answer": text}, ensure_ascii=False)
        self.conversation.replace_placeholder(
            call_id, ASK_TOOL, result, ok=True, asked_by=str(pending.get("asked_by") or "")
        )
        self.conversation.add_user(text, model=False)
        self._emit("answer", {"text": text[:500]})
        return self.run()

    def _report_result(self, outcome: ToolOutcome, asker: str) -> None:
        self._emit(
            "tool_result",
            {
                "id": outcome.call_id,
                "asked_by": asker,
                "name": outcome.name,
                "ok": outcome.ok,
                "result": outcome.for_model()[:2000],
            },
        )

    # --------------------------------------------------------------- sub-agents

    def _fork(
        self, call: ProposedCall, asker: str, may_pause: bool = False
    ) -> ToolOutcome | dict[str, Any]:
        """A sub-agent on the parent's context prefix, the same tools (without `task`)
        and workspace; its whole output in task-outputs/, its summary as the result.
        In the background it runs on while the parent goes on (`task_output` reads
        it); in the foreground, when it is its message's only call, a call of it
        that needs the user's yes pauses the parent (the paused sub-agent is
        returned, for `_pause_for_fork`)."""
        args = call.args or {}
        prompt = str(args.get("prompt") or "").strip()
        if not prompt:
            return ToolOutcome(
                call.call_id, call.name, False, error="prompt is empty", code="invalid_args"
            )
        if self._in_a_fork():
            return ToolOutcome(
                call.call_id,
                call.name,
                False,
                code="no_fork",
                error="a sub-agent cannot fork another sub-agent",
            )
        prefix = [dict(m) for m in self.conversation.model_messages]
        for tool_call in prefix[-1].get("tool_calls") or []:  # the parent's call message
            prefix.append(
                {
                    "role": "tool",
                    "tool_call_id": tool_call["id"],
                    "asked_by": asker,
                    "content": "[forked: handled by a sub-agent]",
                }
            )
        clean = re.sub(r"[^A-Za-z0-9_-]", "", call.call_id)[-24:] or "task"
        task_id = f"{clean}-{uuid.uuid4().hex[:6]}"  # models reuse call ids
        in_background = args.get("background") is True
        turn_id = self.conversation.turn_id
        if in_background and turn_id:  # it outlives this turn: a turn of its own
            turn_id = self._announce(f"{turn_id[:60]}.{uuid.uuid4().hex[:16]}", turn_id)
        conversation = Conversation(
            model_messages=prefix,
            turn_id=turn_id,
            allowed_tools=self.conversation.allowed_tools,
            plan_rounds=self.conversation.plan_rounds,  # its pauses are the request's
        )
        child = self._child(task_id, conversation, pauses=may_pause and not in_background)
        instruction = (
            f"{FORK_MARK}\nYou are a sub-agent forked for one sub-task "
            f"({args.get('description') or 'task'}). Do only this, with the tools you "
            f"have, then answer with a short report of what you did and found. You "
            f"cannot fork further.\n</fork-boilerplate>\n\n{prompt}"
        )
        if in_background:
            background.start(
                task_id,
                lambda: self._summary(
                    child, child.start(instruction), args, task_id, kept=True
                ),
            )
            self.conversation.background = [*self.conversation.background[-9:], task_id]
            running = {
                "status": "running",
                "task_id": task_id,
                "output": f"task-outputs/{task_id}.md",
                "note": "call task_output with this task_id for its summary",
            }
            return ToolOutcome(call.call_id, call.name, True, result=running)
        return self._start_child(call, child, instruction, args, task_id)

    def _in_a_fork(self) -> bool:
        """Whether this loop is a forked sub-agent (which may not fork again)."""
        return any(
            FORK_MARK in str(m.get("content") or "")
            for m in self.conversation.model_messages
        )

    def _skill_fork(
        self, ran: ToolOutcome, used: Mapping[str, Any], may_pause: bool = False
    ) -> ToolOutcome | dict[str, Any]:
        """A skill marked `context: fork`: a sub-agent follows its steps, held to its
        `allowed-tools` (by the executor too, in the turn it named), and its summary
        is the skill call's result; the parent's own tools stay as they were. When
        nothing else of the parent's message waits (`may_pause`), a call of it that
        needs the user's yes pauses the parent, as a `task` sub-agent's does (the
        paused sub-agent is returned, for `_pause_for_fork`); otherwise it is refused."""
        name = str(used.get("name") or "skill")
        call = ProposedCall(ran.call_id, ran.name, "", {"name": name})
        if self._in_a_fork():
            return ToolOutcome(
                call.call_id,
                call.name,
                False,
                code="no_fork",
                error=f"the skill {name!r} runs as a sub-agent, and a sub-agent cannot "
                "fork another",
            )
        conversation = Conversation(
            turn_id=str(used.get("sub_turn_id") or self.conversation.turn_id),
            allowed_tools=_narrowed(
                self.conversation.allowed_tools, used.get("allowed_tools")
            ),
            plan_rounds=self.conversation.plan_rounds,  # its pauses are the request's
        )
        clean = re.sub(r"[^A-Za-z0-9_-]", "", name)[-24:] or "skill"
        task_id = f"skill-{clean}-{uuid.uuid4().hex[:6]}"
        child = self._child(task_id, conversation, pauses=may_pause)
        instruction = (
            f"{FORK_MARK}\nYou are a sub-agent that follows the skill {name!r}. Do what "
            f"its steps say, with the tools you have, then answer with a short report "
            f"of what you did and found. You cannot fork further.\n</fork-boilerplate>"
            f"\n\n{used.get('steps') or ''}"
        )
        described = {"description": f"skill {name}", "prompt": ""}
        return self._start_child(call, child, instruction, described, task_id)

    def _start_child(
        self,
        call: ProposedCall,
        child: AgentLoop,
        instruction: str,
        described: Mapping[str, Any],
        task_id: str,
    ) -> ToolOutcome | dict[str, Any]:
        """Start a foreground sub-agent: its summary as the call's result, or, when
        it paused for the user's yes, the paused sub-agent (for `_pause_for_fork`)."""
        outcome = child.start(instruction)
        if outcome.kind == "plan":
            return {
                "call": call,
                "child": child,
                "task_id": task_id,
                "steps": outcome.steps,
                "described": dict(described),
            }
        return self._finished(call, self._summary(child, outcome, described, task_id))

    def _child(
        self, task_id: str, conversation: Conversation, *, pauses: bool
    ) -> AgentLoop:
        return AgentLoop(
            llm=self.llm,
            tools=self.tools.sub_box(),
            conversation=conversation,
            system_prompt=self.system_prompt,
            tr=self.tr,
            language=self.language,
            session_id=self.session_id,
            settings=LoopSettings(
                max_turns=self.settings.sub_agent_turns,
                context_window=self.settings.context_window,
                max_tokens=self.settings.max_tokens,
                plan_rounds=self.settings.plan_rounds,
            ),
            progress=lambda event: self.progress(
                StreamEvent(event.kind, {**event.data, "agent": task_id})
            ),
            stop_hooks=self.stop_hooks,
            sub_agent=True,
            pauses_parent=pauses,
        )

    def _summary(
        self,
        child: AgentLoop,
        outcome: Outcome,
        args: Mapping[str, Any],
        task_id: str,
        *,
        kept: bool = False,
    ) -> dict[str, Any]:
        """A finished sub-agent's summary for the parent; its output written, and with
        `kept` (a background task) its summary too, for `task_output` after the
        app's process was stopped."""
        output = background.output_path(task_id)
        path = output
        if self.write_output is not None:
            try:
                path = self.write_output(
                    output,
                    f"# {args.get('description') or 'task'}\n\n"
                    f"{args.get('prompt') or ''}\n\n---\n\n{outcome.text}\n",
                )
            except (ToolFailed, AiosError) as exc:
                path = f"(not written: {exc.message})"
        summary: dict[str, Any] = {
            "status": "ok" if outcome.kind == "answer" else outcome.kind,
            "summary": outcome.text[:1500],
            "output": path,
            "turns": child.turns,
        }
        if outcome.detail:
            summary["error"] = outcome.detail  # what the parent model needs to know
        refused = _refused_by_user(child.conversation.model_messages)
        if refused:  # said by the runtime, whatever the sub-agent's report says
            summary["denied_by_user"] = refused
        if kept and self.write_output is not None:
            try:
                self.write_output(
                    background.summary_path(task_id),
                    json.dumps(summary, ensure_ascii=False),
                )
            except (ToolFailed, AiosError):
                pass  # known in this process only; `task_output` says so after it ends
        return summary

    @staticmethod
    def _finished(call: ProposedCall, summary: dict[str, Any]) -> ToolOutcome:
        ok = summary["status"] == "ok"
        error = "" if ok else json.dumps(summary, ensure_ascii=False)
        return ToolOutcome(call.call_id, call.name, ok, result=summary, error=error)

    def _pause_for_fork(self, paused: Mapping[str, Any], asker: str) -> Outcome:
        """The sub-agent's calls wait for the user: the parent pauses with them (the
        sub-agent kept in the parent's pending request, to go on after); `asker` is
        the parent's message whose call forked it."""
        call: ProposedCall = paused["call"]
        child: AgentLoop = paused["child"]
        self.conversation.pending = {
            "kind": "fork",
            "turns": self.turns,
            "asked_by": asker,
            "call_id": call.call_id,
            "tool": call.name,  # `task`, or `skill` for a skill marked fork
            "args": call.args or {},
            "described": dict(paused.get("described") or call.args or {}),
            "task_id": paused["task_id"],
            "child": child.conversation.to_state(),
            "child_turns": child.turns,
            "steps": (child.conversation.pending or {}).get("steps", []),
            "created": round(time.time(), 3),
        }
        self.conversation.plan_rounds += 1
        return Outcome("plan", steps=list(paused["steps"]))

    def _resume_fork(
        self, pending: Mapping[str, Any], results: Mapping[str, Any]
    ) -> Outcome:
        """The paused sub-agent's calls ran (or were denied): it goes on — in its own
        turn, held to the tools it was held to — and its summary is the parent's
        `task` (or `skill`) result, or it pauses the parent again."""
        task_id = str(pending.get("task_id") or "task")
        conversation = Conversation.from_state(pending.get("child") or {})
        child = self._child(task_id, conversation, pauses=True)
        child.turns = int(pending.get("child_turns") or 0)
        call = ProposedCall(
            str(pending.get("call_id")),
            str(pending.get("tool") or TASK_TOOL),
            "",
            dict(pending.get("args") or {}),
        )
        described = dict(pending.get("described") or call.args or {})
        asker = str(pending.get("asked_by") or "")
        outcome = child.resume(results)
        if outcome.kind == "plan":
            return self._pause_for_fork(
                {
                    "call": call,
                    "child": child,
                    "task_id": task_id,
                    "steps": outcome.steps,
                    "described": described,
                },
                asker,
            )
        finished = self._finished(call, self._summary(child, outcome, described, task_id))
        self.conversation.replace_placeholder(
            finished.call_id,
            finished.name,
            finished.for_model(),
            ok=finished.ok,
            asked_by=asker,
        )
        self._report_result(finished, asker)
        return self.run()

    def _task_output(self, call: ProposedCall) -> ToolOutcome:
        """The summary of a background sub-agent (waiting up to `wait` seconds)."""
        args = call.args or {}
        try:
            wait = float(args.get("wait") or 0)
        except (TypeError, ValueError):
            wait = 0.0
        started = self.conversation.background
        task_id = str(args.get("task_id") or (started[-1] if started else ""))
        found = background.result(task_id, wait)
        if found is None and self.read_output is not None:
            found = background.stored(task_id, self.read_output)
        if found is None:
            return ToolOutcome(
                call.call_id,
                call.name,
                False,
                code="unknown_task",
                error=f"no background task {task_id!r} runs here and "
                f"{background.summary_path(task_id)} does not exist: it never started, "
                "or its app was stopped before it finished",
            )
        return ToolOutcome(call.call_id, call.name, True, result=found)

    # --------------------------------------------------------------- compaction

    def _summarize(self, older: list[dict[str, Any]]) -> str:
        text = self.llm.chat(summary_prompt(older), max_tokens=600)
        return text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
