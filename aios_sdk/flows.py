"""`Flows`: an app's behaviour as one method per case, and `Turn`, one call read once.

Every `handle` starts the same way: is this a click on one of the app's controls
(`action_request`) or something the user said, has a step plan already run
(`context["tool_results"]`), what did the app keep last time (`context["cwd_state"]`).
`Turn.read` answers those once; `Flows.handle` reads the turn and dispatches it — an
action to the method marked `@action("<action_id>", …)` (an `action_id` no method
claims to `on_unknown_action`), anything said (or the window opening, `""`) to
`on_instruction`; what the rules do not understand may go to the agent loop, with a
model, by `hand_to_loop(turn)`. An agent hands its calls to a `Flows` class with
`class MusicAgent(AIOSAgent, flows=MusicFlows)`; the flows reach the agent's
`call_tool`, `plan_steps`, `settings` and `llm` as `self.agent` (an
`aios_sdk.ports.AgentPort`), so they can be tested over any object offering those.

    class NotesFlows(Flows):
        def on_instruction(self, turn):
            return text_reply("你好", actions=[button("列出文件", "list_files")])

        @action("list_files")
        def list_files(self, turn):
            if not turn.results:
                return self.agent.plan_steps([{"tool": "file_list", "args": {}}])
            ok, listing, reason = turn.outcome(1)
            ...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from aios_sdk.agent import step_outcome

if TYPE_CHECKING:
    from aios_sdk.ports import AgentPort, ModelPort

__all__ = ["Flows", "Turn", "action"]

F = TypeVar("F", bound=Callable[..., Any])

_ACTION_MARK = "__aios_actions__"


@dataclass(frozen=True)
class Turn:
    """One call of `handle`: what was asked, and what the executor already answered.

    `instruction` is `""` for an action or when the window opens; `action` is the
    `action_request` (`{}` on a first call); `results` is `context["tool_results"]`
    (`{}` until a step plan ran) and `state` is `context["cwd_state"]`;
    `language` / `tr(zh, en)` give the user's language and the text for it.
    """

    instruction: str = ""
    action: Mapping[str, Any] = field(default_factory=dict)
    results: Mapping[str, Any] = field(default_factory=dict)
    state: Mapping[str, Any] = field(default_factory=dict)
    context: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def read(
        cls,
        instruction: str | None,
        context: Mapping[str, Any] | None,
        action_request: Mapping[str, Any] | None = None,
    ) -> Turn:
        context = context or {}
        return cls(
            instruction=instruction or "",
            action=dict(action_request or {}),
            results=dict(context.get("tool_results") or {}),
            state=dict(context.get("cwd_state") or {}),
            context=context,
        )

    @property
    def action_id(self) -> str:
        """The used control's `action_id`, `""` when this is not an action."""
        return str(self.action.get("action_id") or "")

    @property
    def params(self) -> dict[str, Any]:
        """A button's `params` (`{}` when none)."""
        return dict(self.action.get("params") or {})

    @property
    def form_values(self) -> dict[str, Any]:
        """A submitted form's values (`{}` when none)."""
        return dict(self.action.get("form_values") or {})

    @property
    def value(self) -> Any:
        """An input's, slider's or date picker's `value`, else None."""
        return self.action.get("value")

    @property
    def selected(self) -> Any:
        """A select's or radio's `selected` option, else None."""
        return self.action.get("selected")

    @property
    def step_round(self) -> int:
        """How many step plans already ran for this request (`0` on a first call,
        `1` when the first plan's results are in `results`), as the controller counts
        them (`context["step_round"]`)."""
        try:
            return max(0, int(self.context.get("step_round") or 0))
        except (TypeError, ValueError):
            return 0

    @property
    def language(self) -> str:
        """The user's language, `"zh-CN"` or `"en-US"` (`context["language"]`)."""
        return "en-US" if self.context.get("language") == "en-US" else "zh-CN"

    def tr(self, zh: str, en: str) -> str:
        """The text for the user's language: `turn.tr("已保存", "Saved")`."""
        return en if self.language == "en-US" else zh

    def outcome(self, step_id: int) -> tuple[bool, Any, str]:
        """`(ok, result, reason)` of step `step_id` (see `aios_sdk.step_outcome`)."""
        return step_outcome(self.results, step_id, self.language)


def action(*action_ids: str) -> Callable[[F], F]:
    """Mark a `Flows` method as the answer to the actions `action_ids`.

    The method is called with the `Turn`: `@action("play", "next")` then
    `def play(self, turn): …`, reading `turn.action_id`, `turn.params`, ….
    """
    if not action_ids or not all(isinstance(a, str) and a for a in action_ids):
        raise TypeError("@action needs one or more non-empty action ids")

    def mark(method: F) -> F:
        setattr(method, _ACTION_MARK, (*getattr(method, _ACTION_MARK, ()), *action_ids))
        return method

    return mark


class Flows:
    """An app's behaviour over its agent: `on_instruction`, and `@action` methods.

    A subclass writes `on_instruction(turn)` and marks a method per action with
    `@action(...)`; `on_unknown_action(turn)` answers any other `action_id` (by
    default as if the window had just opened). Methods return a reply dict.
    """

    actions: dict[str, str] = {}  # action_id → method name, from @action

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found: dict[str, str] = {}
        for klass in reversed(cls.__mro__):  # a subclass's method wins
            here: dict[str, str] = {}
            for attr, value in vars(klass).items():
                for action_id in getattr(value, _ACTION_MARK, ()):
                    if action_id in here:
                        raise TypeError(
                            f"{klass.__name__}: action {action_id!r} is answered by "
                            f"both {here[action_id]} and {attr}"
                        )
                    here[action_id] = attr
            found.update(here)
        cls.actions = found

    def __init__(self, agent: AgentPort):
        self.agent = agent

    def handle(
        self,
        instruction: str | None,
        context: Mapping[str, Any] | None,
        action_request: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Read the call into a `Turn` and answer it with the method for its case."""
        turn = Turn.read(instruction, context, action_request)
        if not turn.action:
            return self.on_instruction(turn)
        method = self.actions.get(turn.action_id)
        if method is None:
            return self.on_unknown_action(turn)
        answer: Callable[[Turn], dict[str, Any]] = getattr(self, method)
        return answer(turn)

    def on_instruction(self, turn: Turn) -> dict[str, Any]:
        """The answer to what the user said (`turn.instruction`, `""` on opening)."""
        raise NotImplementedError(f"{type(self).__name__} must define on_instruction")

    def on_unknown_action(self, turn: Turn) -> dict[str, Any]:
        """The answer to an `action_id` no `@action` method claims."""
        return self.on_instruction(
            Turn(results=turn.results, state=turn.state, context=turn.context)
        )

    def hand_to_loop(self, turn: Turn) -> dict[str, Any] | None:
        """With a model configured, the agent loop's answer to `turn` (the agent's
        `agent_flows`, with the app's role prompt and its own tools: the atomic tools
        its manifest allows and its `@tool` methods); None without a model, so
        `return self.hand_to_loop(turn) or offline_answer` keeps the offline flow."""
        if not self.llm_available():
            return None
        from aios_sdk.runtime.flows import AgentFlows

        loop = getattr(type(self.agent), "agent_flows", None) or AgentFlows
        return loop(self.agent).start(turn, turn.instruction.strip())

    @property
    def llm(self) -> ModelPort | None:
        """The agent's model (`AgentLLM`, a `ModelPort`), or None when the agent has none."""
        return getattr(self.agent, "llm", None)

    def llm_available(self) -> bool:
        """Whether a model is configured and reachable; never raises."""
        try:
            return bool(self.llm is not None and self.llm.available)
        except Exception:  # an unreachable controller is "no model", not a failure
            return False
