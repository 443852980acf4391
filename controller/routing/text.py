"""Text normalisation for the deterministic router: instructions to match units.

Chinese has no spaces, so an instruction becomes a sequence of *units*: one unit
per CJK character and one per (lower-cased, lightly stemmed) English word or
number. Keywords and examples go through the same function, so a keyword is a
tuple of units and matching is tuple lookup. Filler (帮我, 一下, 的, please, the …)
is marked rather than dropped, so keywords that contain it still match while
n-gram features and coverage ignore it.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

__all__ = ["Unit", "is_cjk", "normalize", "split_units", "stem"]

# A unit is (text, is_cjk, is_filler, start, end); start/end index the normalised string.
# The group that matched says the kind: 1 a CJK character, 2 a word, 3 a number.
_TOKEN = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff])|([a-z]+(?:'[a-z]+)?)|(\d+)")
_CJK, _NUMBER = 1, 3

# Chinese filler, longest first; matched on the normalised text.
_CJK_FILLER = (
    "能不能",
    "可不可以",
    "帮忙",
    "帮我",
    "给我",
    "为我",
    "替我",
    "请你",
    "麻烦",
    "一下",
    "我想",
    "我要",
    "可以",
    "你",
    "我",
    "请",
    "的",
    "了",
    "吧",
    "呢",
    "啊",
    "呀",
    "吗",
    "哦",
    "嘛",
    "把",
    "将",
    "一",
    "个",
    "些",
)
_CJK_FILLER_RE = re.compile("|".join(_CJK_FILLER))

_EN_STOP_WORDS = """a an the to of for me my i i'm you your it its this that these those is are am be
    been was were do does did can could would will shall should please some any and or
    with by in on at from into onto up now just let let's lets want like there here us we
    our what what's how much many which who whom when where why tell give get make
    so very really"""
_EN_STOP = frozenset(_EN_STOP_WORDS.split())


class Unit(NamedTuple):
    """One match unit of a normalised text (a tuple: every instruction makes many)."""

    text: str
    cjk: bool
    filler: bool
    start: int
    end: int


def normalize(text: str) -> str:
    """NFKC (full-width → half-width), lower case, curly quotes straightened."""
    text = unicodedata.normalize("NFKC", text).lower()
    return text.replace("’", "'").replace("‘", "'")


def is_cjk(char: str) -> bool:
    return "\u3400" <= char <= "\u4dbf" or "\u4e00" <= char <= "\u9fff"


def stem(word: str) -> str:
    """A deliberately light English stemmer: plurals, -ing, -ed."""
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
        if len(word) > 2 and word[-1] == word[-2]:  # running → run
            word = word[:-1]
        return word
    if len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and word[-2] not in "siu":
        return word[:-1]
    return word


def split_units(text: str) -> list[Unit]:
    """The units of an already normalised text, in order, with filler marked."""
    # the filler is Chinese: an ASCII text has none to look for
    filler_spans = (
        [] if text.isascii() else [m.span() for m in _CJK_FILLER_RE.finditer(text)]
    )
    units: list[Unit] = []
    span_index = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        start, end = match.span()
        kind = match.lastindex
        if kind == _CJK:
            while span_index < len(filler_spans) and filler_spans[span_index][1] <= start:
                span_index += 1
            filler = span_index < len(filler_spans) and filler_spans[span_index][0] <= start
            units.append(Unit(token, True, filler, start, end))
        elif kind == _NUMBER:  # numbers are arguments, not intent
            units.append(Unit(token, False, True, start, end))
        else:
            units.append(Unit(stem(token), False, token in _EN_STOP, start, end))
    return units
