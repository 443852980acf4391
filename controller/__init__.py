"""The controller: routing, the pipeline and the apps it hands work to.

It discovers and supervises the apps (`apps`), routes each instruction to them
(`routing`, with a model when one is configured: `llm`), runs each task's steps loop
through the executor (`pipeline`), pauses risky plans for the user (`permissions`),
keeps sessions and events, and serves the desktop's API (`api`). Voice, the
scheduler, the OpenAI-compatible entry and MCP out are packages of their own beside
it, composed with it by `aios.compose`.
"""
