"""The controller: the one process the desktop and the `aios` command talk to.

It discovers and supervises the apps (`apps`), routes each instruction to them
(`routing`, with a model when one is configured: `llm`), runs each task's steps loop
through the executor (`pipeline`), pauses risky plans for the user (`permissions`),
keeps sessions and events, listens and speaks (`voice`) and serves all of that over
HTTP (`api`). `launcher` wires the pieces together for `aios start`; `cli` is the
`aios` command.
"""
