"""The error tree at the top of aios_protocol/errors.py is complete and true.

Every `AiosError` subclass of the product (every module imported) is in the tree
under its parent, with its code and HTTP status, and is named after its code; every
code the product raises or answers without a class of its own is listed there too.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import aios_protocol.errors as errors
from aios_protocol.errors import AiosError
from tests.product import PRODUCT_PACKAGES

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = PRODUCT_PACKAGES
# importing these runs a program or changes the interpreter of an app process
NOT_IMPORTED = re.compile(r"\.__main__$|^controller\.apps\.app_site\b|^bench\.apps\b")
# the base class is the family's name; its own code is the fallback of all others
# PeerTimeout: a late answer keeps the code of no answer (app_unreachable); the subclass
# lets call_tool tell a timeout apart
NAME_EXCEPTIONS = {"AiosError": "internal_error", "PeerTimeout": "app_unreachable"}
TREE_LINE = re.compile(r"^( *)[*+-] (\w+): (\w+), (\d{3})(?: \(([\w.]+)\))?$")
CODE_LITERAL = re.compile(r"""\bcode=["']([a-z_]+)["']|\.error\(\s*["']([a-z_]+)["']""")


def _product_modules() -> list[str]:
    names = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, f"{package}."):
            if not NOT_IMPORTED.search(info.name):
                names.append(info.name)
    return names


def _all_error_classes() -> list[type[AiosError]]:
    for name in _product_modules():
        importlib.import_module(name)
    found: list[type[AiosError]] = []
    stack: list[type[AiosError]] = [AiosError]
    while stack:
        cls = stack.pop()
        if cls.__module__.startswith(PACKAGES) and cls not in found:
            found.append(cls)
        stack.extend(cls.__subclasses__())
    return found


def _error_classes() -> dict[str, type[AiosError]]:
    return {cls.__name__: cls for cls in _all_error_classes()}


def test_no_two_error_classes_share_a_name() -> None:
    where: dict[str, list[str]] = {}
    for cls in _all_error_classes():
        where.setdefault(cls.__name__, []).append(cls.__module__)
    shared = {name: modules for name, modules in where.items() if len(modules) > 1}
    assert not shared, f"one name, several classes: {shared}"


def _tree() -> dict[str, tuple[str, int, str | None, str]]:
    """name → (code, status, parent name, module) as written in the docstring."""
    doc = errors.__doc__ or ""
    rows: dict[str, tuple[str, int, str | None, str]] = {}
    parents: list[tuple[int, str]] = []
    for line in doc.splitlines():
        match = TREE_LINE.match(line)
        if not match:
            continue
        indent, name, code, status, module = match.groups()
        while parents and parents[-1][0] >= len(indent):
            parents.pop()
        parent = parents[-1][1] if parents else None
        rows[name] = (code, int(status), parent, module or errors.__name__)
        parents.append((len(indent), name))
    return rows


def _camel(code: str) -> str:
    return "".join(part.capitalize() for part in code.split("_"))


def test_every_error_class_is_in_the_tree_as_it_is() -> None:
    classes = _error_classes()
    tree = _tree()
    assert sorted(tree) == sorted(classes), (
        f"missing from the tree: {sorted(set(classes) - set(tree))}; "
        f"no such class: {sorted(set(tree) - set(classes))}"
    )
    for name, cls in classes.items():
        parent = cls.__mro__[1].__name__ if cls is not AiosError else None
        assert tree[name] == (cls.code, cls.http_status, parent, cls.__module__), name


def test_each_class_is_named_after_its_code() -> None:
    wrong = {
        name: cls.code
        for name, cls in _error_classes().items()
        if NAME_EXCEPTIONS.get(name, name.lower()) != cls.code.replace("_", "").lower()
        and NAME_EXCEPTIONS.get(name) != cls.code
    }
    # CamelCase of the code; an acronym may stay upper case (LLMTimeout)
    assert not wrong, {name: _camel(code) for name, code in wrong.items()}


def test_apps_define_no_error_classes_outside_the_tree() -> None:
    tree = _tree()
    for path in sorted((ROOT / "apps").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {
                    getattr(base, "id", getattr(base, "attr", "")) for base in node.bases
                }
                assert not bases & set(tree), f"{path}: {node.name} belongs in the tree"


def test_every_code_without_a_class_is_listed() -> None:
    doc = errors.__doc__ or ""
    class_codes = {cls.code for cls in _error_classes().values()}
    unlisted: dict[str, str] = {}
    for package in (*PACKAGES, "apps"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for match in CODE_LITERAL.finditer(path.read_text(encoding="utf-8")):
                code = match.group(1) or match.group(2)
                if code not in class_codes and not re.search(rf"\b{code}\b", doc):
                    unlisted[code] = str(path.relative_to(ROOT))
    assert not unlisted, f"add to the codes in aios_sdk/errors.py: {unlisted}"
