"""A stdio MCP server for the users' tests: where it runs, what it was given, what it reads."""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("aios-test-where")


@server.tool(description="The server's working folder.")
def where() -> str:
    return os.getcwd()


@server.tool(description="The server's environment variable `name` (or an empty string).")
def getenv(name: str) -> str:
    return os.environ.get(name, "")


@server.tool(description="Write `text` to the file `name` of the working folder.")
def write(name: str, text: str) -> str:
    with open(name, "w", encoding="utf-8") as handle:
        handle.write(text)
    return os.path.abspath(name)


@server.tool(description="Read the file at `path`; its text or the error's name.")
def read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        return f"error:{type(exc).__name__}"


if __name__ == "__main__":
    server.run()
