"""The typed seams of an app's logic: what it asks of its model and of its agent.

`ModelPort` is the model as flows and the agent loop use it — `available`, `chat`,
`plan_steps`, one loop `turn`, and `progress` for the desktop. `AgentLLM` (the model
through the controller) has this shape, and so does `aios_sdk.testing.ScriptedModel`
(a script of replies, for tests). `AgentPort` is the part of an `AIOSAgent` that a
`Flows` class reaches as `self.agent`: its name, role prompt, settings and model,
`call_tool` and `plan_steps`; any object offering those can stand behind flows.

These are `typing.Protocol`s (checked by shape, not by inheritance), not network
ports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from aios_protocol.llm import LLMTurnReply
    from aios_protocol.messages import Context, Step

__all__ = ["AgentPort", "ModelPort"]


class ModelPort(Protocol):
    """The model an app talks to (`AIOSAgent.llm`); see `aios_sdk.llm.AgentLLM`."""

    @property
    def available(self) -> bool:
        """Whether a model is configured (no call is made when it is not)."""
        ...

    def chat(
        self,
        messages_or_prompt: str | Sequence[Mapping[str, str]],
        json: bool = False,
        *,
        system: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> str | dict[str, Any]:
        """The model's answer: text, or (with `json=True`) a JSON object as a dict."""
        ...

    def plan_steps(
        self,
        instruction: str,
        context: Mapping[str, Any] | Context | None = None,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[dict[str, Any]]:
        """Steps (`{"step_id", "tool", "args"}` dicts) the model plans for `instruction`."""
        ...

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
        """One turn of the agent loop over OpenAI `messages` and function `tools`."""
        ...

    def progress(self, session_id: str, kind: str, data: Mapping[str, Any]) -> None:
        """Publish one step of the agent loop to the desktop; never raises."""
        ...


class AgentPort(Protocol):
    """What a `Flows` class reaches of its agent (`self.agent`); an `AIOSAgent` has it."""

    @property
    def name(self) -> str: ...

    @property
    def role_prompt(self) -> str: ...

    @property
    def settings(self) -> Mapping[str, Any]: ...

    @property
    def llm(self) -> ModelPort: ...

    def call_tool(self, tool_name: str, **args: Any) -> Any: ...

    def plan_steps(
        self, steps: Iterable[Mapping[str, Any] | Step], message: str | None = None
    ) -> dict[str, Any]: ...
