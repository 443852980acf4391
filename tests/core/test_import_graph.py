"""The packages form layers: no two top-level packages import each other, however
indirectly, and the controller never reaches into the executor or the SDK.

Every import statement of every module counts, the ones inside functions too, since
a cycle hidden in a function is still a cycle of the design.
"""

from __future__ import annotations

import ast
import itertools
from collections import defaultdict
from pathlib import Path

from tests.product import PRODUCT_PACKAGES

ROOT = Path(__file__).resolve().parents[2]


def _imported(path: Path) -> set[str]:
    """The top-level product packages a module imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found.update(name.split(".")[0] for name in names)
    return found & set(PRODUCT_PACKAGES)


def package_graph() -> dict[str, dict[str, list[str]]]:
    """package → imported package → the modules that import it."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for package in PRODUCT_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for target in _imported(path) - {package}:
                graph[package][target].append(str(path.relative_to(ROOT)))
    return graph


def _cycle(graph: dict[str, dict[str, list[str]]]) -> list[str] | None:
    """One cycle of packages, or None (depth-first search for a back edge)."""
    state: dict[str, str] = {}
    trail: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        trail.append(node)
        for target in sorted(graph.get(node, {})):
            if state.get(target) == "open":
                return [*trail[trail.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        trail.pop()
        state[node] = "done"
        return None

    for package in sorted(graph):
        if package not in state and (found := visit(package)):
            return found
    return None


def test_no_cycle_between_top_level_packages() -> None:
    graph = package_graph()
    cycle = _cycle(graph)
    where = [
        f"{a} → {b}: {', '.join(graph[a][b][:3])}"
        for a, b in itertools.pairwise(cycle or [])
    ]
    assert cycle is None, (
        "import cycle: " + " → ".join(cycle or []) + "\n" + "\n".join(where)
    )


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b": ["a.py"]}, "b": {"c": ["b.py"]}, "c": {"a": ["c.py"]}}
    assert _cycle(graph) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b": ["a.py"]}, "b": {}}) is None


def test_the_bottom_package_imports_no_other_package_of_ours() -> None:
    assert dict(package_graph().get("aios_protocol", {})) == {}


def test_the_controller_never_imports_the_executor() -> None:
    assert list(package_graph().get("controller", {}).get("executor", [])) == []


def test_the_controller_never_imports_the_sdk() -> None:
    """The model routes' shapes and errors are the protocol's (`aios_protocol.llm`):
    the controller answers them without importing what app authors import."""
    assert list(package_graph().get("controller", {}).get("aios_sdk", [])) == []


def test_no_product_code_imports_the_tests() -> None:
    """The installed product has no `tests` package: a product module (or a shipped
    app or skill) that imports it fails outside a checkout (`aios bench` did)."""
    importing = [
        str(path.relative_to(ROOT))
        for folder in (*PRODUCT_PACKAGES, "apps", "skills")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "tests" in _imported_names(path)
    ]
    assert not importing, f"product code imports tests: {importing}"


def _imported_names(path: Path) -> set[str]:
    """Every top-level name a module imports, ours or not."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found
