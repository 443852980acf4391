"""The `aios` command and the one place where the system is composed.

`compose` builds every part that runs in the controller's process (router, pipeline,
permissions, the desktop's API, voice, the scheduler, the OpenAI-compatible entry, MCP
out) from small named builders, in the order they run; `system` starts and stops a
launch (the executor, the apps, the API server, the launch files); `cli` is the
command line; `scaffold` makes a new app from the SDK's template.
"""
