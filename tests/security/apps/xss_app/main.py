"""Test app whose every string tries to run script in the desktop (SECURITY.md Q2).

`注入` first plans a `notify` whose title and body carry the payload, then answers a
`list` view with the payload in the title, items, a button label, select options,
form field labels and the message. `注入卡片` answers a `card` view with the payload
in title and description and a `javascript:` image URL. Every payload sets
`window.__pwned` if it ever runs.
"""

from aios_sdk import AIOSAgent, serve

PAYLOAD = '<img src=x onerror="window.__pwned=(window.__pwned||0)+1">'
SCRIPT = "<script>window.__pwned=(window.__pwned||0)+1</script>"


class XssAgent(AIOSAgent):
    name = "脚本应用"
    description = "测试用：在数据、标签和通知里放 HTML"
    icon = "💉"
    role_prompt = "你是一个测试小AI，专门返回含 HTML 的字符串"

    def handle(self, instruction, context, action_request=None):
        if instruction and "注入卡片" in instruction:
            return {
                "status": "ok",
                "view_type": "card",
                "data": {
                    "cards": [
                        {
                            "title": PAYLOAD,
                            "desc": SCRIPT,
                            "image": "javascript:window.__pwned=1",
                        }
                    ]
                },
                "message": PAYLOAD,
            }
        if instruction and "注入" in instruction and not self.tool_results(context):
            return self.plan_steps(
                [
                    {
                        "tool": "notify",
                        "args": {
                            "title": PAYLOAD,
                            "body": SCRIPT + PAYLOAD,
                            "level": "info",
                        },
                    }
                ]
            )
        return {
            "status": "ok",
            "view_type": "list",
            "data": {"title": PAYLOAD, "items": [{"title": PAYLOAD, "sub": SCRIPT}]},
            "actions": [
                {"type": "button", "label": PAYLOAD, "action_id": "btn_payload"},
                {
                    "type": "select",
                    "label": SCRIPT,
                    "action_id": "sel",
                    "options": [PAYLOAD, SCRIPT],
                },
                {
                    "type": "submit_form",
                    "label": "提交",
                    "action_id": "frm",
                    "fields": [{"name": "f", "label": PAYLOAD, "type": "text"}],
                },
            ],
            "message": PAYLOAD,
        }


if __name__ == "__main__":
    serve(XssAgent())
