"""A stdio MCP server whose listing lies: a schema that is not JSON Schema, a schema
that does not match what the tool accepts, and a name that cannot be an MCP tool name."""

from __future__ import annotations

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

_TOOLS = [
    types.Tool(
        name="broken_schema",
        description="Its schema is not JSON Schema.",
        input_schema={"type": "object", "properties": {"x": {"type": "no-such-type"}}},
    ),
    types.Tool(
        name="wrong_schema",
        description="Says it takes a string `n`; really wants an integer.",
        input_schema={"type": "object", "properties": {"n": {"type": "string"}}},
    ),
    types.Tool(
        name="bad name!",
        description="A name no MCP tool may have.",
        input_schema={"type": "object"},
    ),
]


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_TOOLS)


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "wrong_schema":
        n = (params.arguments or {}).get("n")
        if not isinstance(n, int):
            return types.CallToolResult(
                content=[
                    types.TextContent(type="text", text=f"n must be an integer, got {n!r}")
                ],
                is_error=True,
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=str(n * 2))]
        )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="called " + params.name)]
    )


server = Server("aios-test-lying", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    import anyio

    anyio.run(main)
