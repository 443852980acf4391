"""Writing code from a description: the LLM hook point of the code app.

With a model configured (`deepseek_api_key` in config.json, or the settings dialog),
`generate_code(llm, "计算斐波那契数列")` asks it for one runnable Python program and
returns the code; without one it returns None and the app falls back to its
templates (`code_templates`). The model is reached through the SDK's `AgentLLM`
(the controller holds the key; the app never sees it).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "ENABLE_HINT",
    "agent_llm",
    "extract_code",
    "generate_code",
    "program_filename",
    "revision_prompt",
]

ENABLE_HINT = (
    "还没有配置大模型，所以先用模板。要根据描述生成代码，请在 config.json 里填写 "
    "deepseek_api_key（或在桌面“设置”里填写 API Key，也可设置环境变量 DEEPSEEK_API_KEY），"
    "任何 OpenAI 兼容的服务都可以（llm_base_url、llm_model）。"
)

SYSTEM_PROMPT = (
    "你是一名 Python 程序员。根据用户的描述写一个完整、可以直接运行的 Python 3 程序："
    "不读取输入、不访问网络、不写工作目录以外的文件，运行时把结果打印出来。"
    "只输出一个 ```python 代码块，不要解释。"
)

_FENCE = re.compile(r"```(?:python|py)?[^\n]*\n(?P<code>.*?)```", re.S)


def agent_llm(agent: Any) -> Any | None:
    """The agent's LLM client (`agent.llm`, or the SDK's `AgentLLM`), if any."""
    llm = getattr(agent, "llm", None)
    if llm is not None:
        return llm
    try:
        from aios_sdk.llm import AgentLLM
    except ImportError:
        return None
    try:
        return AgentLLM()
    except Exception:  # not started by the system: no controller to ask
        return None


def extract_code(reply: str) -> str:
    """The code of the first fenced block in `reply`, else the reply itself."""
    match = _FENCE.search(reply or "")
    code = match["code"] if match else (reply or "")
    return code.strip("\n") + "\n"


def generate_code(llm: Any | None, description: str) -> str | None:
    """Code for `description` from the model, or None when no model can answer."""
    if llm is None:
        return None
    try:
        if not getattr(llm, "available", False):
            return None
        reply = llm.chat(description, system=SYSTEM_PROMPT)
    except Exception:  # the model failing is not the user's error: use a template
        return None
    if not isinstance(reply, str) or not reply.strip():
        return None
    return extract_code(reply)


def program_filename(description: str, taken: set[str] | None = None) -> str:
    """A file name for generated code: an ASCII slug of the description, or program.py."""
    words = re.findall(r"[a-z0-9]+", (description or "").lower())
    stop = {"a", "an", "the", "that", "which", "python", "script", "program", "write", "to"}
    stem = "_".join(w for w in words if w not in stop)[:40].strip("_") or "program"
    name = f"{stem}.py"
    taken = taken or set()
    n = 2
    while name in taken:
        name = f"{stem}_{n}.py"
        n += 1
    return name


def revision_prompt(name: str, code: str, change: str) -> str:
    """The request for a revised version of `name` (the whole program comes back)."""
    return f"修改下面的 {name}：{change}。输出修改后的完整程序。\n```python\n{code}\n```"
