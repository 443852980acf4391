"""What people read when something fails comes from one table per language, by code.

Every error code of the product (each class's, each one listed in the tree of
aios_protocol/errors.py, each literal `code=` the product raises) has a sentence in
both tables; the tables hold the same keys with the same placeholders; English reads
no Chinese and Chinese no English sentence; an exception's own message is English,
whatever the user reads.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import aios_protocol.errors as errors
from aios_protocol.errors import AiosError, AppUnavailable
from aios_protocol.strings import (
    FALLBACK,
    LANGUAGES,
    placeholders_of,
    table,
    user_message,
    user_message_of,
)
from tests.core.test_error_tree import CODE_LITERAL, ROOT, _error_classes
from tests.product import PRODUCT_PACKAGES

# any character of the CJK blocks (ideographs, punctuation, full-width forms)
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")
VARIANT_LITERAL = re.compile(r"""\bvariant\s*=\s*["']([a-z_]+)["']""")


def _product_files() -> list[Path]:
    return [
        path
        for package in (*PRODUCT_PACKAGES, "apps")
        for path in sorted((ROOT / package).rglob("*.py"))
        if "workspace" not in path.parts
    ]


def _listed_codes() -> set[str]:
    """The codes the docstring of errors.py lists without a class of their own."""
    section = (errors.__doc__ or "").split("Codes without a class", 1)[1]
    section = section.split("`tests/core/test_error_tree.py`", 1)[0]
    section = re.sub(r"`[^`]*`", "", section)  # names of functions and classes
    return set(re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", section))


def every_code() -> set[str]:
    codes = {cls.code for cls in _error_classes().values()} | _listed_codes()
    for path in _product_files():
        for match in CODE_LITERAL.finditer(path.read_text(encoding="utf-8")):
            codes.add(match.group(1) or match.group(2))
    return codes


def test_every_code_has_a_sentence_in_every_language() -> None:
    codes = every_code()
    assert {"app_unreachable", "file_not_found", "denied_by_user"} <= codes
    for language in LANGUAGES:
        missing = sorted(codes - set(table(language)))
        assert not missing, f"locale/{language}.json has no sentence for {missing}"


def test_the_tables_hold_the_same_keys_and_placeholders() -> None:
    zh, en = (table(language) for language in LANGUAGES)
    assert sorted(zh) == sorted(en)
    for key in zh:
        assert [placeholders_of(s) for s in zh[key]] == [
            placeholders_of(s) for s in en[key]
        ], key
        # the last sentence of a list is the most general: it needs no more than any
        general = placeholders_of(zh[key][-1])
        assert all(general <= placeholders_of(s) for s in zh[key]), key
    assert not placeholders_of(zh[FALLBACK][-1]) and not placeholders_of(en[FALLBACK][-1])


def test_each_variant_belongs_to_a_code_and_each_one_raised_has_its_words() -> None:
    codes = every_code()
    variants = set()
    for key in table("en-US"):
        code, _, variant = key.partition(".")
        assert code in codes or key == FALLBACK, f"{key}: no such code"
        if variant:
            variants.add(variant)
    raised = {v for p in _product_files() for v in VARIANT_LITERAL.findall(p.read_text())}
    raised |= {cls.variant for cls in _error_classes().values() if cls.variant is not None}
    assert raised and raised <= variants, sorted(raised - variants)


def test_one_language_at_a_time() -> None:
    """English reads no Chinese; every Chinese sentence is Chinese (no English left
    untranslated beside it, no gloss in the other language)."""
    for key, sentences in table("en-US").items():
        for sentence in sentences:
            assert not CJK.search(sentence), (key, sentence)
    for key, sentences in table("zh-CN").items():
        for sentence in sentences:
            assert CJK.search(sentence), (key, sentence)
            assert "(" not in sentence, (key, sentence)  # a gloss: 中文 (English)


def test_a_sentence_is_filled_in_or_falls_back_to_a_general_one() -> None:
    assert user_message("app_unreachable", "en-US", app="Music") == (
        '"Music" could not be reached.'
    )
    assert user_message("app_unreachable", "en-US") == "The app could not be reached."
    assert user_message("app_unreachable.timeout", "zh-CN", app="音乐") == (
        "「音乐」没有及时回答。"
    )
    # a variant without words of its own reads its code's sentence
    assert user_message("cancelled.by_scheduler", "en-US") == "Cancelled."
    assert user_message("no_such_code", "en-US") == "Something went wrong."
    assert user_message("no_such_code", "en-US", app="Music") == (
        '"Music" ran into a problem.'
    )
    # a language without a table reads the product's default, Chinese
    assert user_message("cancelled", "fr-FR") == "已取消。"


def test_an_errors_variant_and_placeholders_choose_its_sentence() -> None:
    restarting = AppUnavailable(
        "app music is restarting", variant="restarting", placeholders={"app": "音乐"}
    )
    assert restarting.sentence_key == "app_unavailable.restarting"
    assert user_message_of(restarting, "zh-CN") == "「音乐」正在重启，请稍后再试。"
    assert user_message_of(restarting, "en-US", app="Music") == (
        '"Music" is restarting. Please try again in a moment.'
    )
    plain = AiosError("boom", code="tool_timeout", placeholders={"tool": "shell_exec"})
    assert user_message_of(plain, "en-US") == (
        'The tool "shell_exec" took too long and was stopped.'
    )


def _error_constructors() -> set[str]:
    return {cls.__name__ for cls in _error_classes().values()}


@pytest.mark.parametrize("package", [*PRODUCT_PACKAGES, "apps"])
def test_exceptions_carry_english_developer_messages(package: str) -> None:
    """No `AiosError` of the product is built with words in Chinese: what the user
    reads comes from the table, never from the exception."""
    names = _error_constructors()
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = getattr(func, "id", getattr(func, "attr", ""))
            if name not in names:
                continue
            for part in ast.walk(node):
                if isinstance(part, ast.Constant) and CJK.search(str(part.value)):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, found
