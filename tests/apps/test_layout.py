"""The shipped apps as examples to copy: their layout, and the HelloAgent the docs quote.

Pure file checks: each app of several modules is a package whose modules carry no
app-name prefix and whose `main.py` is the SDK's entry; `hello_app/main.py` is the
design's HelloAgent as README.md and docs/SDK.md quote it, with no lint suppression.
"""

from __future__ import annotations

import re

import pytest

from tests.procs import ROOT

APPS = ROOT / "apps"
PACKAGED = ("music_app", "code_app", "system_agent", "scheduler_app", "skills_app")
ENTRY = 'from aios_sdk import serve_package\n\nif __name__ == "__main__":\n    serve_package(__file__)\n'


def _code_blocks(markdown: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown, re.S)


@pytest.mark.parametrize("app_id", PACKAGED)
def test_each_app_is_a_package_without_name_prefixes(app_id: str) -> None:
    folder = APPS / app_id
    modules = sorted(p.stem for p in folder.glob("*.py"))
    assert {"__init__", "agent", "flows", "main"} <= set(modules)
    prefixes = {app_id.split("_")[0], "ui", "system", "code", "music", "scheduler"}
    assert not [m for m in modules if m.split("_")[0] in prefixes], modules
    main = (folder / "main.py").read_text("utf-8")
    assert main.split('"""\n\n', 1)[1] == ENTRY
    for path in folder.glob("*.py"):
        text = path.read_text("utf-8")
        assert "# noqa" not in text and "# fmt:" not in text, path.name
        assert "sys.path" not in text, path.name


def test_hello_app_is_the_agent_the_docs_quote() -> None:
    source = (APPS / "hello_app" / "main.py").read_text("utf-8")
    assert "# noqa" not in source and "# fmt:" not in source
    program = source.split('"""\n\n', 1)[1]
    for doc in ("README.md", "docs/SDK.md"):
        blocks = _code_blocks((ROOT / doc).read_text("utf-8"))
        assert program in blocks, f"{doc} no longer quotes apps/hello_app/main.py"
    for design in ('name = "Hello小AI"', 'action_id": "again"', '"message": "已回复"'):
        assert design in program
