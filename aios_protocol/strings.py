"""The sentences people read when something fails: one table per language, keyed by code.

The tables are `aios_protocol/locale/<language>.json` (zh-CN, en-US), read once. A key
is an error code (`app_unreachable`), or `code.variant` for a situation with words of
its own (`app_unavailable.restarting`, from the error's `variant`). A value is one
sentence, or a list of them from the most specific to the most general: the first
whose placeholders (`{app}`, `{tool}`, …) are all given is the one said. A key without
a usable sentence falls back to its code's sentence, then to `fallback`. The
language is the one the caller knows the user reads (a session's, the settings'),
never guessed from a text; one the tables lack reads the product's default, Chinese.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType

from aios_protocol.errors import AiosError

__all__ = [
    "DEFAULT_LANGUAGE",
    "FALLBACK",
    "LANGUAGES",
    "placeholders_of",
    "table",
    "user_message",
    "user_message_of",
]

LANGUAGES: tuple[str, ...] = ("zh-CN", "en-US")
DEFAULT_LANGUAGE = "zh-CN"
FALLBACK = "fallback"  # the key said when neither the key nor its code has a sentence

_LOCALE = Path(__file__).resolve().with_name("locale")
_FORMATTER = string.Formatter()


@cache
def table(language: str) -> Mapping[str, tuple[str, ...]]:
    """The sentences of `language` by key (each a tuple, most specific first)."""
    if language not in LANGUAGES:
        language = DEFAULT_LANGUAGE
    raw = json.loads((_LOCALE / f"{language}.json").read_text(encoding="utf-8"))
    if not isinstance(raw, dict):
        raise ValueError(f"locale/{language}.json: expected an object of sentences")
    sentences: dict[str, tuple[str, ...]] = {}
    for key, value in raw.items():
        said = (value,) if isinstance(value, str) else value
        if not (
            isinstance(said, list | tuple)
            and said
            and all(isinstance(s, str) and s for s in said)
        ):
            raise ValueError(f"locale/{language}.json: {key!r} is not a sentence or a list")
        sentences[key] = tuple(said)
    return MappingProxyType(sentences)


def placeholders_of(sentence: str) -> frozenset[str]:
    """The names a sentence fills in (`"「{app}」正忙"` → `{"app"}`)."""
    return frozenset(name for _, name, _, _ in _FORMATTER.parse(sentence) if name)


def _keys(key: str) -> tuple[str, ...]:
    code = key.split(".", 1)[0]
    return tuple(dict.fromkeys((key, code, FALLBACK)))


def user_message(key: str, language: str, **placeholders: object) -> str:
    """The sentence for `key` (a code or `code.variant`) in `language`, filled in."""
    sentences = table(language)
    given = {name: str(value) for name, value in placeholders.items()}
    for candidate in _keys(key):
        for sentence in sentences.get(candidate, ()):
            if placeholders_of(sentence) <= given.keys():
                return sentence.format_map(given)
    # the fallback always ends with a sentence that needs nothing
    return sentences[FALLBACK][-1]


def user_message_of(error: AiosError, language: str, **placeholders: object) -> str:
    """The sentence for `error` in `language`: its `sentence_key`, filled with its
    `placeholders` and then `placeholders` (the caller's, e.g. the app's name)."""
    return user_message(
        error.sentence_key, language, **{**error.placeholders, **placeholders}
    )
