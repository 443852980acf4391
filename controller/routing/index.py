"""The scoring index of the deterministic router: how well each app fits one task.

Built once per set of app profiles (`index_for` caches by the tuple of profiles)
from each manifest's `name`, `description`, `keywords` and `examples`. Scoring one
instruction combines three signals, in the manner of hassil / Padatious:

* keywords — phrase hits on the unit sequence (a phrase inside a longer matched
  phrase is dropped, so "播放按钮" beats the "播放" in it), weighted by length and
  by how few apps share the phrase; the same keyword twice ("听听") counts once;
* coverage — the share of the instruction's content units that the app's
  vocabulary explains (CJK character bigrams and English words from all fields);
  a unit inside a keyword hit is explained only for the hit's apps, so the
  system app's "播放键" lends it nothing in "停止播放";
* fuzzy — rapidfuzz similarity to the app's closest example, computed only for
  the few apps that already have evidence.

Each app gets a raw fit in 0..1; the router turns the best fits into a confidence.
A runner-up whose keyword hits all sit inside the best app's phrase (between two
of its hits, or after a 把 that puts the object first) is flagged `argument`: it
names the object of the request ("close the code window"), it does not compete.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from controller.routing.text import Unit, normalize, split_units

if TYPE_CHECKING:
    from controller.routing.router import AppProfile

__all__ = ["AppFit", "RoutingIndex", "index_for"]

# Trust of each manifest field as evidence.
_KEYWORD_SOURCE = 1.0
_NAME_SOURCE = 1.0
_EXAMPLE_SOURCE = 0.9
_DESCRIPTION_SOURCE = 0.6
# Mix of the three signals in the raw fit.
_KEYWORD_MIX, _COVERAGE_MIX, _FUZZY_MIX = 0.5, 0.3, 0.2
_FUZZY_CANDIDATES = 5
_PUNCTUATION = re.compile(r"[^\w\s]")
_GENERIC_NAME_PARTS = ("应用", "小ai", "助手", " app", " agent", "app", "agent")
# Chinese particles that put the object before its verb ("把代码窗口最大化").
_OBJECT_MARKERS = frozenset({"把", "将"})
_KEY_END = None  # where a trie node holds the value of the key ending there


@dataclass(frozen=True)
class AppFit:
    """How well one app fits one instruction; `hits` are the matched keywords.

    `argument` (never set on the best fit): every keyword hit of this app sits
    inside a phrase of the best app — between two of its hits ("close the [code]
    window", "写一个[下载]网页的程序") or between a leading 把 / 将 and a later hit
    ("把[代码]窗口最大化") — so the words are the best app's object, not a rival
    request.
    """

    app_id: str
    fit: float
    keyword: float
    coverage: float
    fuzzy: float
    hits: tuple[str, ...] = ()
    argument: bool = False


@dataclass
class _Match:
    start: int  # unit index
    end: int
    apps: tuple[int, ...]
    weight: float  # length weight × idf
    label: str


@dataclass
class RoutingIndex:
    """Inverted index over the apps' vocabularies; immutable after `build`."""

    app_ids: tuple[str, ...]
    keywords: dict[tuple[str, ...], tuple[tuple[int, ...], float, str]] = field(
        default_factory=dict
    )
    loose_keywords: dict[tuple[str, ...], tuple[tuple[int, ...], float, str]] = field(
        default_factory=dict
    )
    longest_keyword: int = 1
    postings: dict[str, tuple[tuple[int, float], ...]] = field(default_factory=dict)
    examples: tuple[tuple[str, ...], ...] = ()
    # `keywords` and `loose_keywords` as tries of units: matching walks a span one
    # unit at a time and stops where no keyword goes on, instead of building and
    # hashing a tuple for every start and length
    _keyword_trie: dict[str | None, Any] = field(init=False, repr=False)
    _loose_trie: dict[str | None, Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._keyword_trie = _trie(self.keywords)
        self._loose_trie = _trie(self.loose_keywords)

    @classmethod
    def build(cls, profiles: tuple[AppProfile, ...]) -> RoutingIndex:
        n_apps = len(profiles)
        phrase_apps: dict[tuple[str, ...], set[int]] = {}
        loose_apps: dict[tuple[str, ...], set[int]] = {}
        labels: dict[tuple[str, ...], str] = {}
        vocab: list[dict[str, float]] = []
        examples: list[tuple[str, ...]] = []
        for index, profile in enumerate(profiles):
            words: dict[str, float] = {}
            phrases = [*profile.keywords, *_name_phrases(profile.name)]
            for phrase in phrases:
                units = split_units(normalize(phrase))
                key = tuple(unit.text for unit in units)
                if not key:
                    continue
                phrase_apps.setdefault(key, set()).add(index)
                labels.setdefault(key, phrase.strip())
                content = tuple(unit.text for unit in units if not unit.filler)
                if len(content) >= 2:
                    loose_apps.setdefault(content, set()).add(index)
                    labels.setdefault(content, phrase.strip())
                _add_features(words, units, _KEYWORD_SOURCE)
            for text, source in (
                (profile.name, _NAME_SOURCE),
                (profile.description, _DESCRIPTION_SOURCE),
                *((name, _NAME_SOURCE) for name in profile.names.values()),
                *((text, _DESCRIPTION_SOURCE) for text in profile.descriptions.values()),
                *((example, _EXAMPLE_SOURCE) for example in profile.examples),
            ):
                _add_features(words, split_units(normalize(text)), source)
            vocab.append(words)
            examples.append(tuple(_fuzzy_form(example) for example in profile.examples))

        document_frequency: dict[str, int] = {}
        for words in vocab:
            for feature in words:
                document_frequency[feature] = document_frequency.get(feature, 0) + 1
        postings: dict[str, list[tuple[int, float]]] = {}
        for index, words in enumerate(vocab):
            for feature, source in words.items():
                weight = source * _idf(document_frequency[feature], n_apps)
                postings.setdefault(feature, []).append((index, weight))

        def with_weight(
            table: dict[tuple[str, ...], set[int]],
        ) -> dict[tuple[str, ...], tuple[tuple[int, ...], float, str]]:
            return {
                key: (
                    tuple(sorted(apps)),
                    _length_weight(key) * _idf(len(apps), n_apps),
                    labels[key],
                )
                for key, apps in table.items()
            }

        keywords = with_weight(phrase_apps)
        return cls(
            app_ids=tuple(profile.app_id for profile in profiles),
            keywords=keywords,
            loose_keywords=with_weight(loose_apps),
            longest_keyword=max((len(key) for key in keywords), default=1),
            postings={feature: tuple(rows) for feature, rows in postings.items()},
            examples=tuple(examples),
        )

    def score(self, text: str) -> list[AppFit]:
        """Every app with any evidence, best fit first."""
        normalized = normalize(text)
        units = split_units(normalized)
        content = [i for i, unit in enumerate(units) if not unit.filler]
        if not content:
            return []
        matches = self._keyword_matches(normalized, units, content)
        keyword_sum: dict[int, float] = {}
        hits: dict[int, list[str]] = {}
        covered: dict[int, dict[int, float]] = {}
        for match in matches:
            for app in match.apps:
                if match.label not in hits.get(app, ()):  # "听听" is one piece of evidence
                    keyword_sum[app] = keyword_sum.get(app, 0.0) + match.weight
                hits.setdefault(app, []).append(match.label)
                cover = covered.setdefault(app, {})
                for i in range(match.start, match.end):
                    cover[i] = max(cover.get(i, 0.0), min(1.0, match.weight))
        # A unit inside a keyword hit belongs to the hit's apps: another app whose
        # vocabulary merely shares the unit ("播放" of "播放键", "play" of "play
        # button") shows no evidence there, as a shorter keyword inside a longer hit.
        owners: dict[int, tuple[int, ...]] = {}
        for match in matches:
            for i in range(match.start, match.end):
                owners[i] = (*owners.get(i, ()), *match.apps)
        for positions, feature in _features_at(units):
            for app, weight in self.postings.get(feature, ()):
                for i in positions:
                    if i in owners and app not in owners[i]:
                        continue
                    cover = covered.setdefault(app, {})
                    cover[i] = max(cover.get(i, 0.0), weight)

        content_set = set(content)
        prelim: dict[int, tuple[float, float]] = {}
        for app in set(keyword_sum) | set(covered):
            keyword = 1.0 - math.exp(-keyword_sum.get(app, 0.0))
            cover = covered.get(app, {})
            coverage = sum(w for i, w in cover.items() if i in content_set) / len(content)
            prelim[app] = (keyword, coverage)
        ranked = sorted(prelim, key=lambda a: -(0.6 * prelim[a][0] + 0.4 * prelim[a][1]))

        query = " ".join(normalized.split())  # _fuzzy_form(text), normalised once
        fits = []
        for rank, app in enumerate(ranked):
            keyword, coverage = prelim[app]
            fuzzy = self._fuzzy(query, app) if rank < _FUZZY_CANDIDATES else 0.0
            fit = _KEYWORD_MIX * keyword + _COVERAGE_MIX * coverage + _FUZZY_MIX * fuzzy
            fits.append(
                AppFit(
                    self.app_ids[app],
                    fit,
                    keyword,
                    coverage,
                    fuzzy,
                    tuple(hits.get(app, ())),
                )
            )
        fits.sort(key=lambda f: -f.fit)
        return self._mark_arguments(fits, matches, units)

    def _mark_arguments(
        self, fits: list[AppFit], matches: list[_Match], units: list[Unit]
    ) -> list[AppFit]:
        """Flag the runners-up whose keyword hits are all the best app's object."""
        if len(fits) < 2:
            return fits
        spans: dict[str, list[tuple[int, int]]] = {}
        for match in matches:
            for app in match.apps:
                spans.setdefault(self.app_ids[app], []).append((match.start, match.end))
        outer = spans.get(fits[0].app_id, [])
        return [
            fits[0],
            *(
                replace(fit, argument=True)
                if _enclosed(spans.get(fit.app_id, []), outer, units)
                else fit
                for fit in fits[1:]
            ),
        ]

    def _keyword_matches(
        self, normalized: str, units: list[Unit], content: list[int]
    ) -> list[_Match]:
        """Keyword hits on the units, and on the content units with filler skipped
        ("打个招呼" hits "打招呼"), minus hits inside longer hits."""
        found: list[_Match] = []
        texts = [unit.text for unit in units]
        for start in range(len(units)):
            node = self._keyword_trie  # walks texts[start:end]
            for end in range(start + 1, min(len(units), start + self.longest_keyword) + 1):
                child = node.get(texts[end - 1])
                if child is None:
                    break  # no keyword starts with this span
                node = child
                entry = node.get(_KEY_END)
                if entry and _contiguous(units, start, end):
                    found.append(_Match(start, end, *entry))
        content_texts = [texts[i] for i in content]
        for first in range(len(content)):
            node = self._loose_trie  # walks content_texts[first:last]
            for last in range(
                first + 1, min(len(content), first + self.longest_keyword) + 1
            ):
                child = node.get(content_texts[last - 1])
                if child is None:
                    break
                node = child
                if last - first < 2:
                    continue  # a skipped-filler hit spans two content units or more
                entry = node.get(_KEY_END)
                if entry and _no_punctuation(normalized, units, content[first:last]):
                    found.append(_Match(content[first], content[last - 1] + 1, *entry))
        unique = {(match.start, match.end, match.apps): match for match in found}
        found = list(unique.values())
        # A phrase inside a longer matched phrase is not separate evidence.
        kept = []
        for match in found:
            for other in found:
                if (
                    other.start <= match.start
                    and match.end <= other.end
                    and other.end - other.start > match.end - match.start
                ):
                    break
            else:
                kept.append(match)
        return kept

    def _fuzzy(self, query: str, app: int) -> float:
        ratio = _fuzz_ratio()
        best = 0.0
        for example in self.examples[app]:
            best = max(best, ratio(query, example))
        return best / 100.0


@lru_cache(maxsize=16)
def index_for(profiles: tuple[AppProfile, ...]) -> RoutingIndex:
    """The index of this exact set of profiles, built once and cached."""
    return RoutingIndex.build(profiles)


def _trie(table: dict[tuple[str, ...], Any]) -> dict[str | None, Any]:
    """`table` as nested dicts, one level per unit; a key's value sits under
    `_KEY_END` in the node its last unit leads to."""
    root: dict[str | None, Any] = {}
    for key, value in table.items():
        node = root
        for unit in key:
            node = node.setdefault(unit, {})
        node[_KEY_END] = value
    return root


@lru_cache(maxsize=1)
def _fuzz_ratio() -> Callable[[str, str], float]:
    from rapidfuzz import fuzz  # imported on first use: keeps start-up cheap

    return fuzz.ratio


def _idf(apps_with_it: int, n_apps: int) -> float:
    """1.0 for evidence unique to one app, falling towards 0 as more apps share it."""
    if n_apps <= 1:
        return 1.0
    return math.log(1 + n_apps / apps_with_it) / math.log(1 + n_apps)


def _length_weight(key: tuple[str, ...]) -> float:
    """Longer phrases are more specific; an English word counts as two characters."""
    size = sum(1 if len(unit) == 1 else 2 for unit in key)
    return min(1.5, 0.3 + 0.35 * size)


def _contiguous(units: list[Unit], start: int, end: int) -> bool:
    """CJK units must be adjacent in the text; English words may be space-separated."""
    for i in range(start, end - 1):
        if units[i].cjk and units[i + 1].cjk and units[i].end != units[i + 1].start:
            return False
    return True


def _no_punctuation(normalized: str, units: list[Unit], positions: list[int]) -> bool:
    """No punctuation between these units: a skipped-filler hit stays in one clause."""
    for a, b in zip(positions, positions[1:], strict=False):
        gap_start, gap_end = units[a].end, units[b].start
        # adjacent units (the usual case) leave no gap to search
        if gap_start < gap_end and _PUNCTUATION.search(normalized, gap_start, gap_end):
            return False
    return True


def _enclosed(
    inner: list[tuple[int, int]], outer: list[tuple[int, int]], units: list[Unit]
) -> bool:
    """Every `inner` hit lies after an opener and before a later `outer` hit; the
    opener is an earlier `outer` hit or a 把 / 将 (the particle that puts the
    object before the verb: "把代码窗口最大化")."""
    if not inner or not outer:
        return False
    first = min(start for start, _ in inner)
    last = max(end for _, end in inner)
    opened = any(end <= first for _, end in outer) or any(
        unit.text in _OBJECT_MARKERS for unit in units[:first]
    )
    return opened and any(start >= last for start, _ in outer)


def _features_at(units: list[Unit]) -> Iterable[tuple[tuple[int, ...], str]]:
    """(unit positions, feature): adjacent CJK content bigrams and English content words."""
    for i, unit in enumerate(units):
        if unit.filler:
            continue
        if not unit.cjk:
            yield (i,), unit.text
            continue
        if i + 1 < len(units):
            after = units[i + 1]
            if after.cjk and not after.filler and after.start == unit.end:
                yield (i, i + 1), unit.text + after.text


def _add_features(words: dict[str, float], units: list[Unit], source: float) -> None:
    for _, feature in _features_at(units):
        words[feature] = max(words.get(feature, 0.0), source)


def _name_phrases(name: str) -> list[str]:
    """The app's name and its name without generic parts ("音乐应用" → "音乐")."""
    phrases = [name]
    lowered = name.lower()
    for part in _GENERIC_NAME_PARTS:
        if part in lowered:
            stripped = lowered.replace(part, "").strip()
            if stripped and stripped != lowered:
                phrases.append(stripped)
            break
    return phrases


def _fuzzy_form(text: str) -> str:
    """The text as compared by rapidfuzz: normalised, spacing collapsed."""
    return " ".join(normalize(text).split())
