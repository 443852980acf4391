"""A test app for `aios mcp`: custom tools the MCP host sees and calls."""

import os

from aios_sdk import AIOSAgent, serve, tool


class ToolboxAgent(AIOSAgent):
    name = "MCP 工具箱测试"
    description = "custom tools served over MCP"
    icon = "🧰"
    role_prompt = "you exercise aios mcp"

    def handle(self, instruction, context, action_request=None):
        return {"status": "ok", "view_type": "text", "data": {"content": instruction}}

    @tool(name="shout", desc="upper-case a word, repeated")
    def shout(self, word: str, times: int = 1) -> str:
        return " ".join([word.upper()] * times)

    @tool(name="whoami", desc="the app process's pid and workdir")
    def whoami(self) -> dict:
        return {"pid": os.getpid(), "workdir": os.environ.get("AIOS_WORKDIR", "")}


if __name__ == "__main__":
    serve(ToolboxAgent())
