"""A stdio MCP server for the limit tests: `hog` allocates memory on demand, and
`--hog-at-start=MB` allocates that much before it serves (over its limit: it dies)."""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("aios-test-hog")


@server.tool(description="Allocate and touch `megabytes` MB, then answer.")
def hog(megabytes: int) -> str:
    block = bytearray(megabytes << 20)
    return f"held {len(block) >> 20} MB"


@server.tool(description="Answer at once.")
def ping() -> str:
    return "pong"


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        if arg.startswith("--hog-at-start="):
            held = bytearray(int(arg.split("=", 1)[1]) << 20)
    server.run()
