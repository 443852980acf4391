"""English text people read quotes with plain quotes: the curly “ ” quotes render
full-width in the desktop's CJK fonts and read as Chinese in an English sentence. A
text counts as English when, its quoted parts left out, it has Latin words and no
Chinese; Chinese text keeps its “ ” and 「」.

The texts looked at are every product package's: the string literals of its Python
(a regular expression is no sentence: the patterns given to `re` are left out), the
string literals of the desktop's JavaScript, and the sentence tables and manifests
(every JSON file: the controller's error sentences in `aios_protocol/locale/` and
the apps' own).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.procs import ROOT

CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
QUOTED = re.compile(r"“[^”]*”")
WORDS = re.compile(r"[A-Za-z]{2,}")
# a JavaScript string literal: '…', "…" or `…` on one line
JS_STRING = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`""")
# the packages whose texts reach a person (the desktop, the apps, the CLI, `/v1`)
PACKAGES = (
    "aios",
    "aios_protocol",
    "aios_runtime",
    "aios_sdk",
    "apps",
    "controller",
    "desktop",
    "executor",
    "mcp_server",
    "openai_entry",
    "scheduler",
    "voice",
)


def english_with_curly_quotes(text: str) -> bool:
    if "“" not in text and "”" not in text:
        return False
    rest = QUOTED.sub("", text)
    return not CHINESE.search(rest) and bool(WORDS.search(rest))


def _patterns(tree: ast.AST) -> set[int]:
    """The nodes inside a call of `re` (`re.compile(…)`, `re.search(…)`): patterns."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
        ):
            inside.update(id(part) for part in ast.walk(node))
    return inside


def python_texts(path: Path) -> Iterator[tuple[int, str]]:
    """Each string literal of `path` (an f-string as its literal parts, joined), but
    the regular expressions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inside = _patterns(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and id(node) not in inside:
            parts = [v.value for v in node.values if isinstance(v, ast.Constant)]
            inside.update(id(v) for v in node.values)
            yield node.lineno, "{}".join(str(p) for p in parts)
    for node in ast.walk(tree):
        is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if is_text and id(node) not in inside:
            yield node.lineno, node.value


def json_texts(value: Any) -> Iterator[str]:
    """Every string in a JSON value (keys left out)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from json_texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_texts(item)


def product_files(root: Path) -> Iterator[Path]:
    """The product's files under `root`, an app's workspace and caches left out."""
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*")):
            skipped = {"workspace", "node_modules", "__pycache__"} & set(path.parts)
            if path.is_file() and not skipped:
                yield path


def curly_english(root: Path) -> list[str]:
    """`path:line: text` of each English text under `root` quoting with “ ”."""
    found = []
    for path in product_files(root):
        where = path.relative_to(root)
        if path.suffix == ".py":
            for line, text in python_texts(path):
                if english_with_curly_quotes(text):
                    found.append(f"{where}:{line}: {text[:80]}")
        elif path.suffix in (".js", ".html"):
            lines = path.read_text(encoding="utf-8").splitlines()
            for number, line in enumerate(lines, 1):
                for literal in JS_STRING.findall(line):
                    if english_with_curly_quotes(literal):
                        found.append(f"{where}:{number}: {literal[:80]}")
        elif path.suffix == ".json":
            texts = json_texts(json.loads(path.read_text(encoding="utf-8")))
            found += [f"{where}: {t[:80]}" for t in texts if english_with_curly_quotes(t)]
    return found


def test_english_texts_of_every_product_package_use_plain_quotes() -> None:
    found = curly_english(ROOT)
    assert not found, "\n".join(found)


def test_the_check_tells_english_from_chinese() -> None:
    assert english_with_curly_quotes("Deleted “{name}”")
    assert not english_with_curly_quotes('Deleted "{name}"')
    assert not english_with_curly_quotes("要操作哪个元素？例如“播放按钮”。")
    assert not english_with_curly_quotes("在“设置”里填写 API key")


def test_the_check_reads_the_sentence_tables_and_the_controllers_code(
    tmp_path: Path,
) -> None:
    """The controller's error sentences (a JSON table) and its own code are looked
    at, the apps' as before; a pattern given to `re` is no sentence."""
    locale = tmp_path / "aios_protocol" / "locale"
    locale.mkdir(parents=True)
    (locale / "en-US.json").write_text(
        json.dumps({"skill_run_failed": ["Not done: the skill “{skill}” failed."]}),
        encoding="utf-8",
    )
    (locale / "zh-CN.json").write_text(
        json.dumps({"skill_run_failed": "没能完成：技能“{skill}”运行出错。"}),
        encoding="utf-8",
    )
    permissions = tmp_path / "controller" / "permissions"
    permissions.mkdir(parents=True)
    (permissions / "confirmations.py").write_text(
        'import re\nQUOTES = re.compile(r"[“”] quoted words")\n'
        'def summary(app):\n    return f"The app “{app}” wants to"\n',
        encoding="utf-8",
    )
    found = curly_english(tmp_path)
    assert found == [
        "aios_protocol/locale/en-US.json: Not done: the skill “{skill}” failed.",
        "controller/permissions/confirmations.py:4: The app “{}” wants to",
    ]
