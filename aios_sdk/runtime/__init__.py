"""The SDK's agent runtime: an app's model-and-tools loop.

- `messages`: typed system / user / assistant / tool messages of text, tool-use and
  tool-result blocks (joined by the tool-use id), the `Conversation` keeping the
  display history apart from the model context, and `StreamEvent`.
- `loop`: `AgentLoop` — the model proposes, the runtime runs the calls through the
  executor and gives the results back, until the model answers.
- `tools`: what the model is offered (`AIOSAgent.available_tools()`) and how a call
  runs (directly, or as a step plan the controller may pause).
- `compaction`, `hooks`: the model context inside its window; checks before the loop
  may finish and the bounded recoveries of a failed turn.
- `flows`: `AgentFlows`, the loop as an app's flows (`agent = True`).

Imported only when an app uses the loop, so an app without one stays light.
"""
