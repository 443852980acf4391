"""A test app: custom tools for the executor to call, and `call_tool` failures."""

from aios_sdk import AIOSAgent, ToolFailed, serve, tool


class ToolAgent(AIOSAgent):
    name = "工具测试"
    description = "custom tools and tool failures"
    icon = "🛠"
    role_prompt = "you exercise the SDK"

    def handle(self, instruction, context, action_request=None):
        try:
            content = self.call_tool("file_read", path=instruction)
        except ToolFailed as exc:
            return {
                "status": "ok",
                "view_type": "text",
                "data": {"content": exc.message, "code": exc.code},
            }
        return {"status": "ok", "view_type": "text", "data": {"content": content}}

    @tool(name="shout", desc="upper-case a word, repeated")
    def shout(self, word: str, times: int = 1) -> str:
        return " ".join([word.upper()] * times)

    @tool(name="settings_echo", desc="this app's settings")
    def settings_echo(self) -> dict:
        return {"settings": self.settings, "app_id": self.app_id}


if __name__ == "__main__":
    serve(ToolAgent())
