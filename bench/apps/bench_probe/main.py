"""The probe app of `aios bench`: one instruction, two planned steps, one text view.

The first call plans `cache_set` then `file_read` (a `loading` reply with
steps); the call after the executor ran them answers with the file's text. It is
copied into the benchmark's own temporary apps folder, never installed for users.
"""

from aios_sdk import AIOSAgent, serve


class BenchProbe(AIOSAgent):
    name = "Bench probe"
    description = "The benchmark's probe: plans cache_set then file_read"
    icon = "⏱️"
    role_prompt = "You answer the benchmark's probe instruction."

    def handle(self, instruction, context, action_request=None):
        results = context.get("tool_results")
        if not results:
            return {
                "status": "ok",
                "view_type": "loading",
                "data": {},
                "message": "正在处理...",
                "steps": [
                    {
                        "step_id": 1,
                        "tool": "cache_set",
                        "args": {"key": "probe", "value": instruction, "ttl": 60},
                    },
                    {"step_id": 2, "tool": "file_read", "args": {"path": "probe.txt"}},
                ],
            }
        read = results.get("step_2") or {}
        return {
            "status": "ok" if read.get("status") == "ok" else "error",
            "view_type": "text",
            "data": {"content": read.get("result")},
            "message": "done",
        }


if __name__ == "__main__":
    serve(BenchProbe())
