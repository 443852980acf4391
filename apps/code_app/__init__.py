"""代码应用: write, show, edit, run and list the Python files of its workspace.

`agent.CodeAgent` hands every call to `flows.CodeFlows`, which plans the steps
(`file_write`, `file_read`, `file_list`, `shell_exec python3 FILE` — run inside the
executor's sandbox) and answers with `code`, `form` and `list` views; `intent`
reads what the user asked, `saving` saves what was typed (never overwriting a file
unasked) and `output` shows and says what a run printed. Code is written from a description by the LLM when one
is configured (`writer`, the hook point), else from `templates`.
"""

from .agent import CodeAgent

__all__ = ["CodeAgent"]
