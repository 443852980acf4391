"""A test app: custom tools for the executor to call, and `call_tool` failures."""

from pydantic import BaseModel

from aios_sdk import AIOSAgent, ToolFailed, serve, tool


class Repeat(BaseModel):
    word: str
    times: int = 2


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

    @tool(
        input=Repeat,
        risk_level="read",
        concurrency_safe=True,
        requires_confirmation=False,
        max_result_size_chars=50,
    )
    def repeat(self, asked: Repeat) -> str:
        """repeat a word (a pydantic input)"""
        return "-".join([asked.word] * asked.times)

    @tool(name="read_present", desc="present.txt as the executor reads it for this call")
    def read_present(self) -> dict:
        return {
            "content": self.call_tool("file_read", path="present.txt"),
            "workdir": str(self.workdir) if self.workdir is not None else None,
        }

    @tool(name="settings_echo", desc="this app's settings")
    def settings_echo(self) -> dict:
        return {"settings": self.settings, "app_id": self.app_id}


if __name__ == "__main__":
    serve(ToolAgent())
