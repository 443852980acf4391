"""Hello小AI: the design's minimal app, one file: the agent and its `serve`.

It greets the user with the greeting of its workspace (`greeting.txt`), whatever
was said; 再说一次 greets again.
"""

from aios_sdk import AIOSAgent, serve


class HelloAgent(AIOSAgent):
    name = "Hello小AI"
    description = "打招呼"
    icon = "👋"
    role_prompt = "你是一个友好的小AI，负责打招呼"

    def handle(self, instruction, context, action_request=None):
        chinese = context.get("language") != "en-US"  # the user's language
        # 用原子工具读取本地问候语
        greeting = self.call_tool("file_read", path="greeting.txt").strip()
        if chinese:
            content = f"{greeting}！很高兴见到你。"
        else:  # the shipped 你好 in English; a greeting the user wrote stays theirs
            greeting = "Hello" if greeting == "你好" else greeting
            content = f"{greeting}! Nice to meet you."
        return {
            "status": "ok",
            "view_type": "text",
            "data": {"content": content},
            "actions": [
                {
                    "type": "button",
                    "label": "再说一次" if chinese else "Say it again",
                    "action_id": "again",
                }
            ],
            "message": "已回复" if chinese else "Replied",
        }


if __name__ == "__main__":
    serve(HelloAgent())
