"""Test app for the OpenAI-compatible entry: one view type per instruction word.

`列表` a list view, `empty` a list without items (nor its own words for it), `表格` a table, `代码` a code view, `慢 S` a text after S seconds
(heartbeats), `读文件` reads hello.txt through one step and answers its text,
`提示` answers the caller's system prompt it got in its context.
"""

import time

from aios_sdk import AIOSAgent, serve


class ViewsAgent(AIOSAgent):
    name = "视图应用"
    description = "测试用：回答列表、表格、代码视图"
    icon = "🧪"
    role_prompt = "你是一个测试小AI，负责回答各种视图"

    def handle(self, instruction, context, action_request=None):
        text = instruction or ""
        results = self.tool_results(context)
        if results:
            content = (results.get("step_1") or {}).get("result")
            return {"status": "ok", "view_type": "text", "data": {"content": content}}
        if "读文件" in text:
            return {
                "status": "ok",
                "view_type": "loading",
                "data": {},
                "steps": [
                    {"step_id": 1, "tool": "file_read", "args": {"path": "hello.txt"}}
                ],
            }
        if "empty" in text:
            return {"status": "ok", "view_type": "list", "data": {"items": []}}
        if "列表" in text:
            items = [
                {"title": "七里香", "sub": "周杰伦"},
                {"title": "晴天", "sub": "周杰伦"},
            ]
            return {
                "status": "ok",
                "view_type": "list",
                "data": {"title": "歌单", "items": items},
                "message": "找到 2 首歌",
            }
        if "表格" in text:
            return {
                "status": "ok",
                "view_type": "table",
                "data": {
                    "columns": ["名字", "大小"],
                    "rows": [["a.txt", 12], ["b|c.txt", 3]],
                },
            }
        if "代码" in text:
            code = "print('hi')\n"
            return {
                "status": "ok",
                "view_type": "code",
                "data": {"language": "python", "code": code},
            }
        if text.startswith("慢"):
            time.sleep(float(text.split()[-1]))
            return {
                "status": "ok",
                "view_type": "text",
                "data": {"content": "慢慢来，好了"},
            }
        if "提示" in text:
            prompt = context.get("caller_system_prompt") or "(none)"
            return {
                "status": "ok",
                "view_type": "text",
                "data": {"content": f"prompt: {prompt}"},
            }
        return {"status": "ok", "view_type": "text", "data": {"content": f"views: {text}"}}


if __name__ == "__main__":
    serve(ViewsAgent())
