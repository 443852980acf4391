"""Test app for the confirmation of risky steps (SECURITY.md).

The instruction names what to plan: `启动进程` (process_start echo), `写数据库`
(db_query CREATE + INSERT), `覆盖笔记` (file_write over the shipped notes.txt),
`新文件 NAME` (file_write of a new file), `再写 NAME` (overwrite it again),
`读笔记` (file_read), `命令 PROGRAM` (shell_exec of PROGRAM). On the call after the
steps ran it answers a `text` view listing each step's status, code and result, so
a denial (`denied_by_user`) is answered gracefully.
"""

import json

from aios_sdk import AIOSAgent, serve


def _plan(instruction: str) -> list[dict]:
    text = instruction or ""
    if "启动进程" in text:
        return [
            {"tool": "process_start", "args": {"cmd": ["echo", "started-by-risky-app"]}}
        ]
    if "写数据库" in text:
        return [
            {
                "tool": "db_query",
                "args": {"dsn": "data.db", "sql": "CREATE TABLE IF NOT EXISTS t(x)"},
            },
            {
                "tool": "db_query",
                "args": {
                    "dsn": "data.db",
                    "sql": "INSERT INTO t VALUES (?)",
                    "params": [1],
                },
            },
        ]
    if "覆盖笔记" in text:
        return [
            {
                "tool": "file_write",
                "args": {"path": "workspace/notes.txt", "content": "overwritten"},
            }
        ]
    if "新文件" in text or "再写" in text:
        name = text.split()[-1]
        return [{"tool": "file_write", "args": {"path": name, "content": text}}]
    if "读笔记" in text:
        return [{"tool": "file_read", "args": {"path": "notes.txt"}}]
    if "命令" in text:
        return [{"tool": "shell_exec", "args": {"cmd": [text.split()[-1], "notes.txt"]}}]
    return []


class RiskyAgent(AIOSAgent):
    name = "风险应用"
    description = "测试用：规划需要用户确认的步骤"
    icon = "⚠️"
    role_prompt = "你是一个测试小AI，负责规划需要确认的步骤"

    def handle(self, instruction, context, action_request=None):
        results = self.tool_results(context)
        if results:
            summary = {
                key: {k: r.get(k) for k in ("tool", "status", "code", "result", "error")}
                for key, r in sorted(results.items())
            }
            denied = any(r.get("code") == "denied_by_user" for r in results.values())
            return {
                "status": "ok",
                "view_type": "text",
                "data": {
                    "content": json.dumps(summary, ensure_ascii=False),
                    "results": summary,
                },
                "message": "好的，已取消这一步" if denied else "已完成",
            }
        steps = _plan(instruction or "")
        if not steps:
            return {
                "status": "ok",
                "view_type": "text",
                "data": {"content": "风险应用就绪"},
            }
        return self.plan_steps(steps)


if __name__ == "__main__":
    serve(RiskyAgent())
