"""Splitting a compound instruction into the parts that become tasks.

Two kinds of boundary:

* *strong* — sequencing words and sentence ends ("，然后", "接着", "；", "。", "then",
  "and then", "先…再…"): always a boundary when both sides have content;
* *weak* — "并", "再", "同时", "and", "also", commas: only a boundary when the two
  sides would go to different apps. The router decides that, so this module
  only proposes the pieces (`Piece.strong` says which kind of boundary precedes
  each one).

Text inside brackets and quotes is never split ("print('a; then b')"), nor is
code at an ASCII `;` followed by another statement ("执行代码 x=5; print(x*2)");
a weak boundary inside content — a reminder's words, a program, up to the next
strong boundary (`controller.routing.content`) — is no boundary ("提醒我喝水并吃药"),
and a connective that is part of a phrase is not a boundary ("再说一次", "再来一首",
"合并", "并不").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from controller.routing.content import blank, blank_quoted, content_spans

__all__ = ["Piece", "clean_part", "split_pieces"]

_STRONG = re.compile(
    r"""
      [;；。！？!?]+                                   # sentence ends
    | [,，、]?\s*(?:然后再|然后|紧接着|接着|随后|之后再|完了再|再然后)
    | [,，、]\s*(?:之后|最后|再)(?!说|来|见|次|一次|一遍|也|三)
    | ,?\s*\b(?:and\s+then|then|after\s+that|afterwards|and\s+also|finally)\b
    """,
    re.VERBOSE,
)
_WEAK = re.compile(
    r"""
      (?<![合吞兼归])并且?(?![不非没发行列排购存])
    | (?<![不一再])再(?!说|来|见|次|一次|一遍|也|三|生)
    | 同时 | 顺便 | 还要 | 以及
    | [,，、]
    | \b(?:and|also|plus)\b
    """,
    re.VERBOSE,
)
# "先A再B": the 再 after a leading 先 is a sequencing word, however it is written.
_FIRST_THEN = re.compile(
    r"^\s*(?:首先|先)(?P<first>.+?)(?P<sep>再)(?!说|来|见|次|一次|一遍)"
)
_LEADING = re.compile(
    r"^(?:\s|[,，、;；]|首先|先|然后|接着|再(?!说|来|见|次|一次|一遍|也)|并且|并|同时|顺便|还要|以及"
    r"|and\b|then\b|also\b|plus\b|first\b|finally\b)+",
    re.IGNORECASE,
)
_TRAILING = re.compile(r"(?:\s|[,，、;；。！？!?])+$")


@dataclass(frozen=True)
class Piece:
    """A part of the instruction: `text[start:end]` of the original, cleaned.

    `strong` says a strong boundary precedes it (always true for the first).
    """

    text: str
    strong: bool
    start: int
    end: int


def split_pieces(text: str) -> list[Piece]:
    """Cut at every strong and weak boundary; empty pieces are dropped."""
    masked = _mask_code_semicolons(blank_quoted(text))
    cuts: list[tuple[int, int, bool]] = []
    first_then = _FIRST_THEN.match(masked)
    if first_then:
        cuts.append((first_then.start("sep"), first_then.end("sep"), True))
    for pattern, strong in ((_STRONG, True), (_WEAK, False)):
        if not strong:  # a reminder's words or a program run to the next strong cut
            masked = _blank_content(text, masked, sorted(cuts))
        for match in pattern.finditer(masked):
            if match.end() > match.start() and not _overlaps(
                cuts, match.start(), match.end()
            ):
                cuts.append((match.start(), match.end(), strong))
    cuts.sort()
    pieces: list[Piece] = []
    position, strong = 0, True
    for start, end, cut_strong in [*cuts, (len(text), len(text), True)]:
        piece = clean_part(text[position:start])
        if piece:
            pieces.append(Piece(piece, strong or not pieces, position, start))
            strong = cut_strong
        else:
            strong = strong or cut_strong
        position = end
    return pieces


def clean_part(text: str) -> str:
    """A part without leading connectives and trailing punctuation."""
    return _TRAILING.sub("", _LEADING.sub("", text.strip())).strip()


def _overlaps(cuts: list[tuple[int, int, bool]], start: int, end: int) -> bool:
    return any(start < cut_end and cut_start < end for cut_start, cut_end, _ in cuts)


_CODE_STATEMENT = re.compile(
    r"\s*(?:(?:import|from|print|for|while|if|def|class|return|del|assert|pass)\b"
    r"|[A-Za-z_][\w.]*\s*(?:[-+*/%]?=(?!=)|\(|\[))"
)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def _mask_code_semicolons(text: str) -> str:
    """`text` with each ASCII `;` that joins two code statements blanked: the rest of
    its piece starts like a Python statement and holds no CJK text."""
    if ";" not in text:
        return text
    out = list(text)
    for match in re.finditer(";", text):
        rest = text[match.end() :]
        upto = _STRONG.search(rest)
        rest = rest[: upto.start()] if upto else rest
        if _CODE_STATEMENT.match(rest) and not _CJK.search(rest):
            out[match.start()] = "\x00"
    return "".join(out)


def _blank_content(text: str, masked: str, cuts: list[tuple[int, int, bool]]) -> str:
    """`masked` with the content of each stretch between strong cuts blanked."""
    spans: list[tuple[int, int]] = []
    start = 0
    for cut_start, cut_end, _ in [*cuts, (len(text), len(text), True)]:
        spans += [(start + a, start + b) for a, b in content_spans(text[start:cut_start])]
        start = cut_end
    return blank(masked, spans)
