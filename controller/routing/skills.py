"""Routing to skills: an instruction no app claims but a skill's summary matches goes to 技能.

`SkillRouter` wraps the deterministic router (inside the `FallbackRouter`, so a
skill is found before a model or a catch-all app is asked). It asks the inner
router first; only when that gives no task (or gives the instruction to the
catch-all app only because it asks for knowledge or a work no app names,
`RoutePlan.asked`), and an app whose manifest gives it the `skills` role is
installed, it matches the instruction against the installed skills'
summaries and names (offline, deterministic, Chinese and English alike) and, on a match, answers
one task for the skills app with the instruction as said — the app finds the skill
again with `search_skills`. The skills come from a callable (the composition root reads the
executor's listing: `providers["skills"]["skills"]`); when it fails, routing goes on
without skills. A summary's *words* are its English words (lightly stemmed, stop
words left out) and its CJK character pairs (filler such as 帮我 / 一下 left out), as
the deterministic router reads text (`controller.routing.text`). A skill matches
when it shares at least `MIN_SHARED` words with the instruction, or when the
instruction names it; the best match wins (most shared words, then the larger share
of the instruction explained, then the name).

A part that *names* a skill is the skills app's whatever app its verb sounds like
(`named_skill`): an installed skill's exact name said as a word ("run temp_convert",
"运行技能temp_convert"), unless an app has that name among its keywords, or the word
技能 / skill right after a verb of running or using ("运行技能 …", "use the skill
…"). "运行" is the code app's word, but a skill is not a program of its workspace.
A part the scheduler takes (it asks for something later) stays the scheduler's.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from controller.routing.router import (
    AppProfile,
    PlannedTask,
    RoutePlan,
    Router,
    app_in_role,
)
from controller.routing.text import normalize, split_units

__all__ = [
    "MIN_SHARED",
    "SkillMatch",
    "SkillRouter",
    "match_skill",
    "named_skill",
    "words",
]

MIN_SHARED = 2
_SHORTEST_WORD = 3  # English words shorter than this are no evidence
_PREFIX = 5  # "convert" and "converter" share their first five letters: one word
# a verb of running or using, then the word for a skill: "运行技能", "run the skill"
_RUN_A_SKILL = re.compile(
    r"(运行|执行|使用|启动|调用|用|跑)(一下|一个|这个|那个)?\s*技能"
    r"|\b(run|execute|use|start|launch|invoke|call)\s+(the\s+|a\s+|my\s+|this\s+)?skill\b",
    re.I,
)
# what a request naming a skill holds: a word a name could be, or 技能 / skill
_MAY_NAME = re.compile(r"[A-Za-z0-9_-]{3,}|技能")
_NAME_EDGE = "A-Za-z0-9_\\-"  # characters a skill's name is made of


@lru_cache(maxsize=4096)
def words(text: str) -> frozenset[str]:
    """The matching words of `text`: English words and CJK character pairs."""
    found: set[str] = set()
    previous: str | None = None
    for unit in split_units(normalize(text)):
        if unit.filler:
            previous = None
            continue
        if unit.cjk:
            if previous is not None:
                found.add(previous + unit.text)
            previous = unit.text
            continue
        previous = None
        if len(unit.text) >= _SHORTEST_WORD:
            found.add(unit.text)
    return frozenset(found)


def _same(a: str, b: str) -> bool:
    if a == b:
        return True
    if not (a.isascii() and b.isascii()):
        return False
    return len(a) >= _PREFIX and len(b) >= _PREFIX and a[:_PREFIX] == b[:_PREFIX]


@dataclass(frozen=True)
class SkillMatch:
    name: str
    shared: tuple[str, ...]  # the instruction's words the skill's summary has
    share: float  # of the instruction's words


def _name_said(name: str, text: str) -> bool:
    lowered = normalize(text)
    return len(name) >= _SHORTEST_WORD and name.lower() in lowered


def _said_as_word(name: str, text: str) -> bool:
    """`name` said whole: not inside a longer name ("temp_convert2", "my-temp_convert")."""
    edge = _NAME_EDGE
    pattern = rf"(?<![{edge}]){re.escape(name.lower())}(?![{edge}])"
    return re.search(pattern, normalize(text)) is not None


def named_skill(
    text: str, skills: Iterable[Mapping[str, Any]], keywords: Iterable[str] = ()
) -> str | None:
    """The installed skill `text` names by its exact name, "技能" when it asks to run
    or use a skill without a name, or None. A name that is also one of `keywords`
    (the apps' words: "music", "code") names no skill here."""
    taken = {normalize(word).strip() for word in keywords}
    for skill in skills:
        name = str(skill.get("name") or "")
        if len(name) < _SHORTEST_WORD or name.lower() in taken:
            continue
        if _said_as_word(name, text):
            return name
    if _RUN_A_SKILL.search(normalize(text)):
        return "技能"
    return None


def match_skill(text: str, skills: Iterable[Mapping[str, Any]]) -> SkillMatch | None:
    """The installed skill `text` asks for, or None (see the module text)."""
    said = words(text)
    best: tuple[tuple[int, float, int, str], SkillMatch] | None = None
    for skill in skills:
        name = str(skill.get("name") or "")
        if not name or skill.get("error"):
            continue
        # a person asks in their language: every language's summary is evidence
        summaries = skill.get("summaries") or {}
        summary = " ".join({str(skill.get("summary") or ""), *map(str, summaries.values())})
        own = words(summary) | words(name.replace("_", " ").replace("-", " "))
        shared = tuple(sorted(w for w in said if any(_same(w, o) for o in own)))
        named = _name_said(name, text)
        if len(shared) < MIN_SHARED and not named:
            continue
        share = len(shared) / len(said) if said else 0.0
        rank = (len(shared) + (MIN_SHARED if named else 0), share, -len(name), name)
        found = SkillMatch(name, shared, round(share, 3))
        if best is None or rank > best[0]:
            best = (rank, found)
    return best[1] if best is not None else None


class SkillRouter:
    """`inner`, and for an instruction it gives no task, the skills app when a skill
    matches (`skills()`: the installed skills' short forms, `name` / `summary` /
    `summaries` / `error`)."""

    CONFIDENCE = 0.7  # a skill match is sure: no model need be asked to agree

    def __init__(self, inner: Router, skills: Callable[[], Sequence[Mapping[str, Any]]]):
        self.inner = inner
        self._skills = skills

    @property
    def confident(self) -> float | None:
        """The inner router's `confident` (what a `FallbackRouter` around this reads)."""
        return getattr(self.inner, "confident", None)

    def route(self, text: str, apps: Sequence[AppProfile]) -> RoutePlan:
        plan = self.inner.route(text, apps)
        skills_app = app_in_role(apps, "skills")
        if skills_app is None:
            return plan
        if plan.tasks and not plan.asked and not _MAY_NAME.search(text):
            return plan  # no word a skill's name or 技能 could be: no listing asked
        try:
            skills = self._skills()
        except Exception:  # the executor restarting: route without skills
            skills = []
        plan = self._named(plan, apps, skills_app, skills)
        if plan.tasks and not plan.asked:
            return plan
        found = match_skill(text, skills)
        if found is None:
            return plan
        hits = ", ".join(found.shared[:4])
        return RoutePlan(
            tasks=[PlannedTask("t1", skills_app, text.strip())],
            confidence=max(self.CONFIDENCE, self.confident or 0.0),
            llm_calls=plan.llm_calls,
            reason=f"t1→{skills_app} 技能 {found.name} [{hits}]",
        )

    def _named(
        self,
        plan: RoutePlan,
        apps: Sequence[AppProfile],
        skills_app: str,
        skills: Sequence[Mapping[str, Any]],
    ) -> RoutePlan:
        """`plan` with each task whose part names a skill given to the skills app (a
        plan that already gives it there, now sure of it)."""
        scheduler = app_in_role(apps, "scheduler")
        keywords = [word for app in apps for word in app.keywords]
        moved: list[str] = []
        tasks = []
        for task in plan.tasks:
            name = None
            if task.app_id != scheduler:
                name = named_skill(task.instruction, skills, keywords)
            if name is not None:
                task = dataclasses.replace(task, app_id=skills_app)
                moved.append(f"{task.task_id}→{skills_app} 技能 {name} [named]")
            tasks.append(task)
        if not moved:
            return plan
        alone = len(moved) == len(tasks)
        return dataclasses.replace(
            plan,
            tasks=tasks,
            confidence=max(self.CONFIDENCE, plan.confidence) if alone else plan.confidence,
            reason="; ".join([*moved, plan.reason]),
            asked=False,
        )
