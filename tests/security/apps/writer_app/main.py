"""Test app for the crash tests (SECURITY.md C5, C6).

`写入 N` plans a SQLite insert, a 20 KB JSON file and a cache entry, and keeps a
2 KB state in the session; `后台 TAG` starts `python3 sleeper.py TAG` in the
background; `检查` runs `PRAGMA integrity_check` through `db_query`.
"""

import json

from aios_sdk import AIOSAgent, serve


class WriterAgent(AIOSAgent):
    name = "写入应用"
    description = "测试用：不停写数据库、文件和会话状态"
    icon = "💾"
    role_prompt = "你是一个不停写入的测试小AI"

    def handle(self, instruction, context, action_request=None):
        text = instruction or ""
        results = self.tool_results(context)
        if results:
            return {
                "status": "ok",
                "view_type": "text",
                "data": {"content": "done", "results": results},
                "state": {"last": text, "blob": "y" * 2000},
            }
        words = text.split()
        if "后台" in text:
            return self.plan_steps(
                [
                    {
                        "tool": "process_start",
                        "args": {
                            "cmd": ["python3", "sleeper.py", words[-1]],
                            "background": True,
                        },
                    }
                ]
            )
        if "检查" in text:
            return self.plan_steps(
                [
                    {
                        "tool": "db_query",
                        "args": {"dsn": "data.db", "sql": "PRAGMA integrity_check"},
                    }
                ]
            )
        if "写入" in text.replace("写入应用", ""):
            n = int(words[-1]) if words[-1].isdigit() else 0
            payload = "x" * 4000
            return self.plan_steps(
                [
                    {
                        "tool": "db_query",
                        "args": {
                            "dsn": "data.db",
                            "sql": "CREATE TABLE IF NOT EXISTS log(n, payload)",
                        },
                    },
                    {
                        "tool": "db_query",
                        "args": {
                            "dsn": "data.db",
                            "sql": "INSERT INTO log VALUES (?, ?)",
                            "params": [n, payload],
                        },
                    },
                    {
                        "tool": "file_write",
                        "args": {
                            "path": "state.json",
                            "content": json.dumps({"n": n, "payload": "z" * 20000}),
                        },
                    },
                    {"tool": "cache_set", "args": {"key": "last", "value": n}},
                ]
            )
        return {"status": "ok", "view_type": "text", "data": {"content": "写入应用就绪"}}


if __name__ == "__main__":
    serve(WriterAgent())
