"""MCP out: one app's tools for any MCP host.

`toolbox` lists an app's tools and runs one call the way a planned step runs (the
controller's permission review, then the executor); its routes serve the running
system's toolbox to `aios mcp`. `stdio` is `aios mcp --app APP_ID`: the MCP server over
standard input and output, using the running system or starting its own services.
"""
