"""Test app for the orphan tests (SECURITY.md C5): it leaves processes everywhere.

`前台 TAG` runs `python3 forker.py TAG` in the foreground and `后台 TAG` in the
background (forker.py forks a child and a double-forked daemon, all sleeping);
`自己 TAG` makes the app's own code start such a process, outside any tool.
"""

import subprocess
import sys

from aios_sdk import AIOSAgent, serve


class ForkerAgent(AIOSAgent):
    name = "分叉应用"
    description = "测试用：到处留下进程"
    icon = "🍴"
    role_prompt = "你是一个到处留下进程的测试小AI"

    def handle(self, instruction, context, action_request=None):
        words = (instruction or "").split()
        if self.tool_results(context):
            return {"status": "ok", "view_type": "text", "data": {"content": "done"}}
        tag = words[-1] if words else "none"
        if "自己" in words:
            subprocess.Popen(
                [sys.executable, "workspace/forker.py", tag],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            return {"status": "ok", "view_type": "text", "data": {"content": "started"}}
        background = "后台" in words
        return self.plan_steps(
            [
                {
                    "tool": "process_start",
                    "args": {
                        "cmd": ["python3", "forker.py", tag],
                        "background": background,
                    },
                }
            ]
        )


if __name__ == "__main__":
    serve(ForkerAgent())
