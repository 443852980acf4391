"""Test app for the fault suite: the instruction (or the opened view) names the fault.

`挂起` stops the whole process (SIGSTOP: it answers nothing, health checks
included); `卡住` blocks the call for 60 s while `/health` still answers; `慢体检 S`
makes every `/health` take 1 s for the next S seconds while calls answer at once; `刷屏 N` writes N MB to stdout before answering; `慢步骤` plans a 5.37 s
`shell_exec` of `sleep`; `快步骤` plans an `echo`; `启动进程` plans a risky `process_start`.
Anything else is answered at once with a `text` view echoing the instruction. After
a plan ran, the reply lists each step's status and code.
"""

import os
import signal
import sys
import time

from flask import request

from aios_runtime.serving import start_server
from aios_sdk import AIOSAgent
from aios_sdk.server import create_app

SLOW_HEALTH_UNTIL = [0.0]  # monotonic time until which /health takes 1 s

PLANS = {
    "慢步骤": [
        {
            "step_id": 1,
            "tool": "shell_exec",
            "args": {"cmd": ["sleep", "5.37"], "timeout": 30},
        }
    ],
    "快步骤": [
        {"step_id": 1, "tool": "shell_exec", "args": {"cmd": ["echo", "fast-step-ok"]}}
    ],
    "启动进程": [
        {"step_id": 1, "tool": "process_start", "args": {"cmd": ["echo", "started"]}}
    ],
}


class FaultAgent(AIOSAgent):
    name = "故障应用"
    description = "测试用：按指令挂起、刷屏或规划慢步骤"
    icon = "💥"
    role_prompt = "你是一个测试小AI"

    def handle(self, instruction, context, action_request=None):
        text = instruction or ""
        results = self.tool_results(context)
        if results:
            summary = {
                k: {"status": r.get("status"), "code": r.get("code")}
                for k, r in sorted(results.items())
            }
            ok = all(r["status"] == "ok" for r in summary.values())
            return {
                "status": "ok" if ok else "error",
                "view_type": "text",
                "data": {"content": str(summary), "results": summary},
            }
        if "挂起" in text:
            # frozen for good: woken by a SIGCONT (none is expected), it says so in its
            # log and freezes again, so the test still meets a hung app
            while True:
                stopped_at = time.monotonic()
                os.kill(os.getpid(), signal.SIGSTOP)
                print(
                    f"fault_app: woken {time.monotonic() - stopped_at:.3f} s after "
                    "SIGSTOP; freezing again",
                    file=sys.stderr,
                    flush=True,
                )
        if "卡住" in text:
            time.sleep(60)
        if "慢体检" in text:
            SLOW_HEALTH_UNTIL[0] = time.monotonic() + float(text.split()[-1])
            return {"status": "ok", "view_type": "text", "data": {"content": "slow health"}}
        if "刷屏" in text:
            megabytes = int(text.split()[-1])
            chunk = b"x" * 1023 + b"\n"
            for _ in range(megabytes * 1024):
                sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
            return {"status": "ok", "view_type": "text", "data": {"content": "flooded"}}
        for word, plan in PLANS.items():
            if word in text:
                return {"status": "ok", "view_type": "loading", "data": {}, "steps": plan}
        return {"status": "ok", "view_type": "text", "data": {"content": text or "ready"}}


def slow_health() -> None:
    if request.path == "/health" and time.monotonic() < SLOW_HEALTH_UNTIL[0]:
        time.sleep(1.0)


if __name__ == "__main__":
    app = create_app(FaultAgent())
    app.before_request(slow_health)
    start_server(app, int(os.environ["APP_PORT"]), background=False)
