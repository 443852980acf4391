"""Test app that takes 1.5 s per call: 100 simultaneous calls saturate it (D2)."""

import time

from aios_sdk import AIOSAgent, serve


class SlowAgent(AIOSAgent):
    name = "慢应用"
    description = "测试用：每次回答前等 1.5 秒"
    icon = "🐢"
    role_prompt = "你是一个很慢的测试小AI"

    def handle(self, instruction, context, action_request=None):
        time.sleep(1.5)
        return {"status": "ok", "view_type": "text", "data": {"content": "slow ok"}}


if __name__ == "__main__":
    serve(SlowAgent())
