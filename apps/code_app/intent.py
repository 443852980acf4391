"""What a code request asks for, read from Chinese or English text without an LLM.

"执行代码 print(2**10)" → run a snippet; "运行 hello.py" → run a file; "run
fibonacci" / "运行程序" → run the program named (if any: `run_named`);
"查看 hello.py" / "编辑 hello.py" / "列出我的代码文件" / "写一个计算斐波那契数列的程序".
Also the workspace file-name rule (`safe_filename`): a relative `.py` path with no
`..`, no hidden parts and no odd characters. Pure functions, no I/O.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["CodeIntent", "program_named", "read_intent", "safe_filename"]


@dataclass(frozen=True)
class CodeIntent:
    kind: str  # home list run_snippet run_file run_named show edit new write help
    code: str = ""
    path: str = ""
    description: str = ""


_OPEN_APP = re.compile(
    r"^(请|帮我)?(打开|启动|开启|进入|open|launch|start)\s*(the\s+)?"
    r"(代码|编程|code|coding)\s*(应用|编辑器|app|editor)?\s*(窗口|window)?$"
)
# `\w` holds every Chinese character: a class that names their range again costs
# tens of milliseconds to compile case-insensitively, at each start of the app
_FILE = r"(?P<file>[\w\-./]+\.py)"
_FENCE = re.compile(r"```(?:python|py)?\s*\n?(?P<code>.*?)```", re.S)
_RUN_SNIPPET = re.compile(
    r"^(请|帮我)?\s*(执行|运行|跑一下|跑|试一下|计算)\s*(一下|这段)?\s*(python|py)?\s*(代码|程序|脚本)?\s*[:：]?\s*(?P<code>.+)$"
    r"|^(please\s+)?(run|execute|eval|evaluate)\s+(this\s+|the\s+following\s+)?(python\s+)?(code|snippet)?\s*[:：]?\s*(?P<code2>.+)$",
    re.S | re.I,
)
_ANY_FILE = r"(文件|file|the file)?"
_RUN_VERB = re.compile(r"^(请|帮我)?\s*(执行|运行|跑一下|跑|run|execute)", re.I)
# words around a program's name that are not its name ("运行我的程序 fib", "run the
# program fib"), and the numbers after it ("运行 temp_convert 37")
_NOT_A_NAME = re.compile(
    r"^(一下|这个|那个|我的|技能|程序|代码|脚本|文件|命令|python|py|the|my|this|that|it"
    r"|a|an|program|script|code|file|skill|command|\d+(\.\d+)?)$",
    re.I,
)
_NAME_WORD = re.compile(r"[\w\-.]+")


def _file_command(
    verbs: str, noun: str = _ANY_FILE, rest: str = r"\s*$", flags: int = re.I
) -> re.Pattern[str]:
    """`[请|帮我] <verb> [文件] NAME.py<rest>`: a command about one workspace file."""
    return re.compile(rf"^(请|帮我)?\s*({verbs})\s*{noun}\s*{_FILE}{rest}", flags)


_RUN_FILE = _file_command("执行|运行|跑一下|跑|run|execute", noun=r"(文件|file)?")
_SHOW_FILE = _file_command(
    "查看|打开|显示|看看|看一下|读取|show|open|view|cat|display|read"
)
_EDIT_FILE = _file_command(
    "编辑|修改|改一下|改|edit|modify|change|update",
    rest=r"(\s+|\s*[,，:：]\s*|(?-i:(?=[\u4e00-\u9fff]))|$)(?P<rest>.*)$",
    flags=re.I | re.S,
)
_NEW_FILE = _file_command(
    "新建|创建|建立|new|create", noun=r"(一个)?\s*(文件|file|script)?"
)
_LIST = re.compile(
    r"(列出|列表|有哪些|所有的?|我的)(python|py)?\s*(代码|文件|脚本|程序)"
    r"|(代码|脚本|程序)(文件)?列表"
    r"|\b(list|show|see)\b.*\b(files|scripts|programs|code)\b",
    re.I,
)
_WRITE = re.compile(
    r"^(请|帮我|给我)?\s*(用\s*python\s*)?(写一个|写个|写一段|编写|写|生成|做一个|实现|创建一个|算|计算|求)(?P<desc>.+)$"
    r"|^(please\s+)?(write|create|generate|make|implement)\s+(me\s+)?(?P<desc2>.+)$",
    re.I | re.S,
)
_LOOKS_LIKE_CODE = re.compile(
    r"(print\s*\(|^\s*(def|class|import|for|while|if)\b|=|\w+\(.*\))", re.M
)


def read_intent(instruction: str | None) -> CodeIntent:
    text = (instruction or "").strip()
    if not text:
        return CodeIntent("home")
    if _OPEN_APP.match(text.lower()):  # "打开代码应用" routed here: the home view
        return CodeIntent("home")
    fence = _FENCE.search(text)
    if fence:
        return CodeIntent("run_snippet", code=fence["code"].strip("\n"))
    for pattern, kind in (
        (_RUN_FILE, "run_file"),
        (_SHOW_FILE, "show"),
        (_EDIT_FILE, "edit"),
        (_NEW_FILE, "new"),
    ):
        match = pattern.match(text)
        if match:
            rest = (match.groupdict().get("rest") or "").strip()
            rest = re.sub(r"^(to|so that|让它|使它|让|使)\s*", "", rest, flags=re.I)
            return CodeIntent(kind, path=match["file"], description=rest)
    if _LIST.search(text):
        return CodeIntent("list")
    match = _RUN_SNIPPET.match(text)
    if match:
        code = (match["code"] or match["code2"] or "").strip()
        if code and _LOOKS_LIKE_CODE.search(code):
            return CodeIntent("run_snippet", code=code)
        if code and _is_expression(code):  # "计算 2**10": show the value
            return CodeIntent("run_snippet", code=f"print({code})")
        if code and _RUN_VERB.match(text):  # "run fibonacci", "运行程序": which program?
            return CodeIntent("run_named", path=program_named(code))
    match = _WRITE.match(text)
    if match:
        desc = (match["desc"] or match["desc2"] or "").strip()
        return CodeIntent("write", description=desc or text)
    if _LOOKS_LIKE_CODE.search(text) and not re.search(r"[\u4e00-\u9fff]", text):
        return CodeIntent("run_snippet", code=text)
    return CodeIntent("help", description=text)


def program_named(words: str) -> str:
    """The name of the program `words` (what follows a run verb) name, or "" when
    they name none ("程序", "the code", "一下")."""
    for part in re.split(r"(技能|程序|代码|脚本|文件|命令|一下|这个|那个|我的)", words):
        for word in _NAME_WORD.findall(part):
            if not _NOT_A_NAME.match(word) and not re.fullmatch(r"[\d.]+", word):
                return word
    return ""


def _is_expression(text: str) -> bool:
    """Whether `text` parses as one Python expression (parsed only, never run)."""
    if re.search(r"[\u4e00-\u9fff]", text) or not re.search(r"\d", text):
        return False
    try:
        ast.parse(text, mode="eval")
    except (SyntaxError, ValueError):
        return False
    return True


_SAFE_PART = re.compile(r"^[\w\-.]+$")


def safe_filename(name: str, default: str = "") -> str | None:
    """`name` as a workspace-relative `.py` path, or None if it could leave the workspace.

    `workspace/x.py` and `./x.py` are accepted as `x.py`; absolute paths, `..`,
    hidden parts and characters outside letters, digits, `_`, `-` and `.` are not.
    """
    name = (name or default).strip().replace("\\", "/")
    name = name.removeprefix("./").removeprefix("workspace/")
    if not name or name.startswith("/") or "\x00" in name:
        return None
    parts = name.split("/")
    if any(
        p in ("", ".", "..") or p.startswith(".") or not _SAFE_PART.match(p) for p in parts
    ):
        return None
    if not name.endswith(".py"):
        name += ".py"
    return name
