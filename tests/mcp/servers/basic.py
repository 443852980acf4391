"""A stdio MCP server for the tests: ordinary tools, a hanging one, a crash, a huge answer.

`crash` ends the process (the provider must restart it); `probe_read` and
`probe_connect` report what the server can reach from inside its sandbox.
"""

from __future__ import annotations

import asyncio
import os
import socket

from mcp.server.mcpserver import MCPServer

server = MCPServer("aios-test-basic")


@server.tool(description="Answer the text back, upper-cased.")
def shout(text: str) -> str:
    return text.upper()


@server.tool(description="Add two integers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Wait `seconds`, then answer (the hanging tool).")
async def wait(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "done"


@server.tool(description="Answer `megabytes` MB of text.")
def huge(megabytes: int) -> str:
    return "x" * (megabytes << 20)


@server.tool(description="End the server process at once.")
def crash() -> str:
    os._exit(3)


@server.tool(description="Try to read a file; answer the first bytes or the error.")
def probe_read(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return "read:" + handle.read(64).decode("utf-8", "replace")
    except OSError as exc:
        return f"error:{type(exc).__name__}"


@server.tool(description="Try a TCP connection to 127.0.0.1:port; answer ok or the error.")
def probe_connect(port: int) -> str:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return "connected"
    except OSError as exc:
        return f"error:{type(exc).__name__}"


@server.tool(description="The server's environment variable `name` (or an empty string).")
def getenv(name: str) -> str:
    return os.environ.get(name, "")


if __name__ == "__main__":
    server.run()
