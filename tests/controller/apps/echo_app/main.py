"""Test app: echoes the instruction with what the controller injected into `handle`.

Its copies (other ids) are the victims of the supervision tests; `快照` in the
instruction reads the desktop's UI snapshot from the executor's system cache.
"""

import os

from aios_sdk import AIOSAgent, serve

ENV_KEYS = ("AIOS_APP_ID", "AIOS_WORKDIR", "AIOS_EXECUTOR_URL", "AIOS_CONTROLLER_URL")


class EchoAgent(AIOSAgent):
    name = "回声应用"
    description = "回声：重复用户说的话"
    icon = "🔁"
    role_prompt = "你是一个回声小AI，负责重复用户说的话"

    def handle(self, instruction, context, action_request=None):
        if instruction and "快照" in instruction:
            snapshot = self.call_tool("cache_get", key="ui_snapshot", namespace="system")
            return {"status": "ok", "view_type": "text", "data": {"snapshot": snapshot}}
        return {
            "status": "ok",
            "view_type": "text",
            "data": {
                "content": f"echo: {instruction}",
                "context": context,
                "action_request": action_request,
                "pid": os.getpid(),
                "settings": self.settings,
                "env": {k: os.environ.get(k) for k in ENV_KEYS},
            },
            "message": "回声完毕",
            "state": {"last_echo": instruction} if instruction else {},
        }


if __name__ == "__main__":
    serve(EchoAgent())
