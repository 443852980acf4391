"""Writing code from a description: the LLM hook point of the code app.

With a model configured (the API key in the desktop's Settings, or `llm.api_key`),
`draft_code(llm, "计算斐波那契数列")` asks it for one runnable Python program and
returns a `Draft` holding the code, stripped of Markdown fences and checked to parse
as Python (parsed only, never run here). Without a model the draft has no code and
no note, and the app falls back to its templates (`templates`) with
`ENABLE_HINT` (in English `ENABLE_HINT_EN`); when the model fails (timeout, refused
key, an answer that is not a program) the draft has no code and a short `note` saying
so in the user's language, and the app falls back the same way. The model is reached through the SDK's `AgentLLM` (the controller
holds the key; the app never sees it).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ENABLE_HINT",
    "ENABLE_HINT_EN",
    "Draft",
    "draft_code",
    "extract_code",
    "failure_note",
    "free_name",
    "generate_code",
    "program_filename",
    "revision_prompt",
]

ENABLE_HINT = "还没有设置大模型。想按你的描述写代码，请在“设置”里填写大模型的 API 密钥。"
ENABLE_HINT_EN = (
    "No model is set up yet. To have code written from your description, enter a "
    "model's API key in Settings."
)

SYSTEM_PROMPT = (
    "你是一名 Python 程序员。根据用户的描述写一个完整、可以直接运行的 Python 3 程序："
    "不读取输入、不访问网络、不写工作目录以外的文件，运行时把结果打印出来。"
    "只输出代码本身（放在一个 ```python 代码块里），不要任何解释。"
)

_FENCE = re.compile(r"```[ \t]*(?:python3?|py)?[^\n]*\n(?P<code>.*?)```", re.S | re.I)
_OPEN_FENCE = re.compile(r"^\s*```[ \t]*(?:python3?|py)?[^\n]*\n", re.I)


@dataclass(frozen=True)
class Draft:
    """The model's program (`code`), or why there is none (`note`; "" = no model)."""

    code: str | None = None
    note: str = ""


def extract_code(reply: str) -> str:
    """The code of the first fenced block in `reply` (an unclosed fence too), else
    the reply itself."""
    text = reply or ""
    match = _FENCE.search(text)
    if match:
        code = match["code"]
    else:
        code = _OPEN_FENCE.sub("", text, count=1)
        code = re.sub(r"\n?```\s*$", "", code)
    return code.strip("\n") + "\n"


def failure_note(error: BaseException | str | None = None, language: str = "zh-CN") -> str:
    """The short clause telling the user the model failed (a fallback follows), in
    `language` ("zh-CN" or "en-US")."""
    english = language == "en-US"
    if error is None:
        return (
            "The model did not answer this time; " if english else "大模型这次没有答上来，"
        )
    code = error if isinstance(error, str) else getattr(error, "code", "") or "error"
    if english:
        return f"The model did not answer this time ({code}); "
    return f"大模型这次没有答上来（{code}），"


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return bool(code.strip())


def draft_code(llm: Any | None, description: str, language: str = "zh-CN") -> Draft:
    """The model's program for `description`; never raises (a failure's note is in
    `language`)."""
    if llm is None:
        return Draft()
    try:
        if not getattr(llm, "available", False):
            return Draft()
        reply = llm.chat(description, system=SYSTEM_PROMPT)
    except Exception as exc:  # the model failing is not the user's error
        return Draft(note=failure_note(exc, language))
    if not isinstance(reply, str) or not reply.strip():
        return Draft(note=failure_note("llm_bad_reply", language))
    code = extract_code(reply)
    if not _parses(code):
        return Draft(note=failure_note("llm_bad_reply", language))
    return Draft(code=code)


def generate_code(llm: Any | None, description: str) -> str | None:
    """Code for `description` from the model, or None when no model can answer."""
    return draft_code(llm, description).code


def program_filename(description: str, taken: set[str] | None = None) -> str:
    """A file name for generated code: an ASCII slug of the description's English
    words, or program.py."""
    words = re.findall(r"[a-z0-9]+", (description or "").lower())
    stop = {"a", "an", "the", "that", "which", "python", "script", "program", "write", "to"}
    kept = [w for w in words if w not in stop]
    if not any(re.search(r"[a-z]", w) for w in kept):  # "计算1到100之和": no name in it
        kept = []
    stem = "_".join(kept)[:40].strip("_") or "program"
    return free_name(f"{stem}.py", taken or set())


def free_name(name: str, taken: Collection[str]) -> str:
    """`name`, or `stem_2.py`, `stem_3.py`, … : the first not in `taken`."""
    stem = name.removesuffix(".py")
    n = 2
    while name in taken:
        name = f"{stem}_{n}.py"
        n += 1
    return name


def revision_prompt(name: str, code: str, change: str) -> str:
    """The request for a revised version of `name` (the whole program comes back)."""
    return f"修改下面的 {name}：{change}。输出修改后的完整程序。\n```python\n{code}\n```"
