"""Hello小AI: the design's minimal app (S-76), its class kept exactly as the design wrote it."""

# fmt: off
from aios_sdk import AIOSAgent  # noqa: I001

class HelloAgent(AIOSAgent):
    name = "Hello小AI"
    description = "打招呼"
    icon = "👋"
    role_prompt = "你是一个友好的小AI，负责打招呼"

    def handle(self, instruction, context, action_request=None):
        # 用原子工具读取本地问候语
        greeting = self.call_tool("file_read", path="greeting.txt")
        return {
            "status": "ok",
            "view_type": "text",
            "data": {"content": f"{greeting}，{instruction}"},
            "actions": [
                {"type": "button", "label": "再说一次", "action_id": "again"}
            ],
            "message": "已回复"
        }
# fmt: on


if __name__ == "__main__":
    from aios_sdk import serve

    serve(HelloAgent())
