"""智能助手: a general agent, the SDK's agent loop (`aios_sdk.runtime`) as an app.

`agent.AssistantAgent` hands every call to `flows.AssistantFlows`, an `AgentFlows`:
the model proposes tool calls, the runtime runs them through the executor, their
results go back into the model's context until it answers. Settings (`config.json`
`app_settings.assistant_app`): `max_turns`, `context_window`, `max_tokens`,
`plan_rounds`.
"""

from .agent import AssistantAgent

__all__ = ["AssistantAgent"]
