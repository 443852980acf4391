"""Everything the repository cites is in the repository.

Every design id (`S-nn`, `F-n`) a source file, test or document cites is defined in
docs/DESIGN.md, and no file points at material that is not here (tracker issues,
the specification folder outside the repository, other projects' names).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.product import PRODUCT_PACKAGES

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "docs" / "DESIGN.md"
CITED_SUFFIXES = {".py", ".md", ".js", ".json", ".html", ".css", ".toml", ".tmpl"}
ID = re.compile(r"\b[SF]-[0-9]+\b")
DEFINITION = re.compile(r"^- \*\*([SF]-[0-9]+)\*\* ", re.MULTILINE)
OUTSIDE = re.compile(r"\b[Ii]ssue \d+\b|\bUFO\b|shared/spec|\bRipple\b|\bMACHINE\.md\b")

# Files of other parts that still cite outside material; each is rewritten to state
# the contract instead. The test fails once a file here stops citing, so the list
# only shrinks.
PENDING_OUTSIDE: set[str] = set()


def _repository_files() -> list[Path]:
    """Tracked and new (not ignored) files with a suffix that may cite the design."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [
        ROOT / name
        for name in listed
        if Path(name).suffix in CITED_SUFFIXES
        and not name.startswith("test-artifacts/")
        and (ROOT / name).is_file()
    ]


def _defined_ids() -> set[str]:
    return set(DEFINITION.findall(DESIGN.read_text(encoding="utf-8")))


def test_design_defines_each_id_once() -> None:
    found = DEFINITION.findall(DESIGN.read_text(encoding="utf-8"))
    repeated = sorted({ident for ident in found if found.count(ident) > 1})
    assert found and not repeated, f"defined more than once: {repeated}"


def test_every_cited_id_is_defined() -> None:
    defined = _defined_ids()
    undefined: dict[str, list[str]] = {}
    for path in _repository_files():
        for ident in set(ID.findall(path.read_text(encoding="utf-8", errors="replace"))):
            if ident not in defined:
                undefined.setdefault(ident, []).append(str(path.relative_to(ROOT)))
    assert not undefined, f"cited but not defined in docs/DESIGN.md: {undefined}"


def test_nothing_outside_the_repository_is_cited() -> None:
    citing = {
        str(path.relative_to(ROOT))
        for path in _repository_files()
        if path.name != "test_design_ids.py"
        and OUTSIDE.search(path.read_text(encoding="utf-8", errors="replace"))
    }
    new = sorted(citing - PENDING_OUTSIDE)
    assert not new, f"state the contract instead of citing: {new}"
    done = sorted(PENDING_OUTSIDE - citing)
    assert not done, f"no longer citing, drop from PENDING_OUTSIDE: {done}"


# requirement ids and SECURITY.md's row ids (A1, C5, W3 …) belong in tests and docs,
# where the reader has the table beside them; product code says what it means
PRODUCT_DIRS = (*PRODUCT_PACKAGES, "apps")
ROW_ID = re.compile(r"\b[SF]-[0-9]+\b|\b[ACDJW][0-9]\b")


def test_product_code_says_words_not_ids() -> None:
    citing = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _repository_files()
        if path.relative_to(ROOT).parts[0] in PRODUCT_DIRS
        and path.suffix in {".py", ".js", ".html", ".css"}
        and "workspace" not in path.relative_to(ROOT).parts
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ROW_ID.search(line)
    ]
    assert citing == [], f"say it in words: {citing[:20]}"
