"""智能助手: a general agent on the model-and-tools loop.

`agent.AssistantAgent` hands every call to `flows.AssistantFlows`, which runs
`loop.AgentLoop`: the model proposes tool calls, the runtime runs them through the
executor (`tools`), their results go back into the model's context (`messages`)
until it answers without a tool call. Calls that may need the user's yes go to the
controller as a step plan, where the permission policy can pause them (pause and
replay); `compaction` keeps the model context inside its window, `hooks` checks an
answer before the loop may finish. Settings (`config.json`
`app_settings.assistant_app`): `max_turns`, `context_window`, `max_tokens`,
`plan_rounds`.
"""

from .agent import AssistantAgent

__all__ = ["AssistantAgent"]
