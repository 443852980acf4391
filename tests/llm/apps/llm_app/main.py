"""Test app: answers its initial view with what the LLM said through the controller."""

import json
import os

from aios_sdk import AIOSAgent, serve


class LLMApp(AIOSAgent):
    name = "模型测试应用"
    description = "asks the LLM through the controller"
    icon = "🧠"
    role_prompt = "test app"

    def handle(self, instruction, context, action_request=None):
        answer = self.llm.chat("请打个招呼")
        return {
            "status": "ok",
            "view_type": "text",
            "data": {
                "content": answer,
                "key_in_env": "sk-wiring-test" in json.dumps(dict(os.environ)),
            },
        }


if __name__ == "__main__":
    serve(LLMApp())
