"""English text of the apps and the desktop quotes with plain quotes: the
curly “ ” quotes render full-width in the desktop's CJK fonts and read as Chinese in an
English sentence. A text counts as English when, its quoted parts left out, it has
Latin words and no Chinese; Chinese text keeps its “ ” and 「」.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from tests.procs import ROOT

CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
QUOTED = re.compile(r"“[^”]*”")
WORDS = re.compile(r"[A-Za-z]{2,}")
# a JavaScript string literal: '…', "…" or `…` on one line
JS_STRING = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`""")


def english_with_curly_quotes(text: str) -> bool:
    if "“" not in text and "”" not in text:
        return False
    rest = QUOTED.sub("", text)
    return not CHINESE.search(rest) and bool(WORDS.search(rest))


def python_texts(path: Path) -> Iterator[tuple[int, str]]:
    """Each string literal of `path` (an f-string as its literal parts, joined)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = [v.value for v in node.values if isinstance(v, ast.Constant)]
            inside.update(id(v) for v in node.values)
            yield node.lineno, "{}".join(str(p) for p in parts)
    for node in ast.walk(tree):
        is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if is_text and id(node) not in inside:
            yield node.lineno, node.value


def test_english_texts_of_the_apps_and_the_desktop_use_plain_quotes() -> None:
    found = []
    for path in sorted((ROOT / "apps").rglob("*.py")):
        if "workspace" in path.parts:
            continue
        for line, text in python_texts(path):
            if english_with_curly_quotes(text):
                found.append(f"{path.relative_to(ROOT)}:{line}: {text[:80]}")
    for path in sorted((ROOT / "desktop" / "web").glob("*.js")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for literal in JS_STRING.findall(line):
                if english_with_curly_quotes(literal):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {literal[:80]}")
    assert not found, "\n".join(found)


def test_the_check_tells_english_from_chinese() -> None:
    assert english_with_curly_quotes("Deleted “{name}”")
    assert not english_with_curly_quotes('Deleted "{name}"')
    assert not english_with_curly_quotes("要操作哪个元素？例如“播放按钮”。")
    assert not english_with_curly_quotes("在“设置”里填写 API key")
