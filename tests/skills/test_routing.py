"""Routing to skills: summaries' words (zh and en) send what no app claims to 技能.

The shipped apps' manifests and the shipped example skills' real summaries (read
from `skills/` by the catalog, `--help` run for real) route `routing_skills.json`
exactly; with the skills in place every case of the routing set and of the held-out
set still routes as before (100%).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from controller.routing.router import AppProfile, DeterministicRouter, RoutePlan
from controller.routing.skills import SkillRouter, match_skill, words
from executor.skills.catalog import FolderScan, HelpRun
from executor.skills.examples import seed_examples
from tests.controller.test_router import ROUTING_SET, app_ids, shipped_apps
from tests.controller.test_routing_heldout import HELDOUT

SKILLS_APP = "skills_app"  # the shipped app whose manifest has the `skills` role

CASES = Path(__file__).with_name("routing_skills.json")
ROOT = Path(__file__).resolve().parents[2]


def _help(path: Path, folder: Path, lang: str) -> HelpRun:
    done = subprocess.run(
        [str(path), "--help"],
        capture_output=True,
        text=True,
        timeout=10,
        env={**os.environ, "LANG": lang},
    )
    return HelpRun(done.stdout, done.stderr, done.returncode)


@pytest.fixture(scope="module")
def example_skills(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    shared = tmp_path_factory.mktemp("routing") / "skills"
    assert set(seed_examples(shared, ROOT / "skills").copied) == {
        "temp_convert",
        "text_stats",
        "code_review.md",
    }
    skills = [s.listed() for s in FolderScan(shared, "shared", _help).scan()]
    assert all(s["error"] is None for s in skills)
    return skills


@pytest.fixture(scope="module")
def apps() -> tuple[AppProfile, ...]:
    profiles = shipped_apps()
    assert SKILLS_APP in {p.app_id for p in profiles}
    return profiles


def test_words_are_english_words_and_cjk_pairs_without_filler() -> None:
    assert words("帮我把温度转换一下") == {"温度", "度转", "转换"}
    assert words("Convert the temperatures, please") == {"convert", "temperature"}


def test_the_skill_cases_route_exactly(example_skills, apps) -> None:
    router = SkillRouter(DeterministicRouter(), lambda: example_skills)
    for case in json.loads(CASES.read_text("utf-8"))["cases"]:
        plan = router.route(case["text"], apps)
        assert app_ids(plan) == case["apps"], (case, plan.reason)
        if "skill" in case:
            assert f"技能 {case['skill']}" in plan.reason, (case, plan.reason)
            assert plan.confidence >= DeterministicRouter.CONFIDENT
            assert match_skill(case["text"], example_skills).name == case["skill"]


@pytest.mark.parametrize(
    "cases_file", [ROUTING_SET, HELDOUT], ids=["routing_set", "heldout"]
)
def test_every_earlier_case_still_routes_the_same(example_skills, apps, cases_file) -> None:
    plain = DeterministicRouter()
    router = SkillRouter(DeterministicRouter(), lambda: example_skills)
    changed = []
    for case in json.loads(cases_file.read_text("utf-8"))["cases"]:
        with_skills, without = (
            router.route(case["text"], apps),
            plain.route(case["text"], apps),
        )
        if app_ids(with_skills) != case["apps"] or app_ids(without) != app_ids(with_skills):
            changed.append((case["text"], app_ids(with_skills)))
    assert changed == []


def test_no_skills_app_or_no_listing_routes_without_skills(example_skills, apps) -> None:
    without_app = tuple(a for a in apps if a.app_id != SKILLS_APP)
    router = SkillRouter(DeterministicRouter(), lambda: example_skills)
    assert router.route("把30摄氏度换算成华氏度", without_app).tasks == []

    def broken() -> list[dict]:
        raise ConnectionError("the executor is restarting")

    assert (
        SkillRouter(DeterministicRouter(), broken)
        .route("把30摄氏度换算成华氏度", apps)
        .tasks
        == []
    )


def test_broken_skills_and_single_shared_words_do_not_route(apps) -> None:
    skills = [
        {
            "name": "weather",
            "summary": "天气预报 weather forecast",
            "error": "--help printed nothing",
        },
        {"name": "mailer", "summary": "发送邮件 send email", "error": None},
    ]
    router = SkillRouter(DeterministicRouter(), lambda: skills)
    assert router.route("明天的天气预报", apps).tasks == []  # broken: never a target
    assert router.route("帮我发一封邮件", apps).tasks == []  # one pair (邮件) is not enough
    assert app_ids(router.route("帮我发送邮件给老王", apps)) == [SKILLS_APP]
    assert app_ids(router.route("send an email to Bob", apps)) == [SKILLS_APP]


def test_it_sits_inside_the_fallback_router_as_its_deterministic_part() -> None:
    inner = DeterministicRouter(confident=0.55)
    router = SkillRouter(inner, list)
    assert router.confident == 0.55

    class Fixed:
        def route(self, text, apps) -> RoutePlan:
            return RoutePlan(tasks=[], confidence=0.0)

    assert SkillRouter(Fixed(), list).confident is None


def test_the_examples_are_shipped_in_the_formats_templates() -> None:
    folder = ROOT / "skills"
    python = (folder / "temp_convert.py").read_text()
    assert (
        python.startswith("#!/usr/bin/env python3") and "argparse.ArgumentParser(" in python
    )
    assert "RawDescriptionHelpFormatter" in python and "epilog=" in python
    shell = (folder / "text_stats.sh").read_text()
    assert shell.startswith("#!/bin/bash") and 'if [ "$1" = "--help" ]; then' in shell
    review = (folder / "code_review.md").read_text()
    assert review.startswith("---\nsummaries:\n")
    assert "\n---\n<!-- zh-CN -->\n# " in review and "\n<!-- en-US -->\n# " in review
    assert shutil.which("bash")


NAMING_A_SKILL = [
    ("运行技能 temp_convert 37", "temp_convert"),
    ("运行技能temp_convert", "temp_convert"),
    ("run temp_convert", "temp_convert"),
    ("run the skill temp_convert 37", "temp_convert"),
    ("运行text_stats", "text_stats"),
    ("用技能 text_stats 统计 notes.txt", "text_stats"),
    ("use the skill text_stats on notes.txt", "text_stats"),
    ("运行技能", "技能"),
    ("run a skill", "技能"),
]


@pytest.mark.parametrize(("text", "named"), NAMING_A_SKILL)
def test_a_request_naming_a_skill_goes_to_the_skills_app_not_the_code_app(
    example_skills, apps, text, named
) -> None:
    """A request that names a skill (技能, skill, or an installed skill's exact name) is
    the skills app's, surely, whatever app its verb (运行 / run) sounds like."""
    plan = SkillRouter(DeterministicRouter(), lambda: example_skills).route(text, apps)
    assert app_ids(plan) == [SKILLS_APP], plan.reason
    assert "code_app" not in app_ids(plan)
    assert f"技能 {named} [named]" in plan.reason
    assert plan.confidence >= DeterministicRouter.CONFIDENT


def test_a_skill_named_inside_a_compound_or_a_schedule(example_skills, apps) -> None:
    router = SkillRouter(DeterministicRouter(), lambda: example_skills)
    both = router.route("运行技能 temp_convert 37，然后播放音乐", apps)
    assert app_ids(both) == [SKILLS_APP, "music_app"], both.reason
    later = router.route("每天早上8点运行技能 temp_convert 37", apps)
    assert app_ids(later) == ["scheduler_app"], later.reason  # its content, for later


def test_a_skill_name_inside_a_longer_word_or_an_apps_keyword_names_nothing(apps) -> None:
    skills = [
        {"name": "temp_convert", "summary": "x", "error": None},
        {"name": "code", "summary": "y", "error": None},
    ]
    router = SkillRouter(DeterministicRouter(), lambda: skills)
    assert app_ids(router.route("运行 temp_convert2.py", apps)) == ["code_app"]
    assert app_ids(router.route("run the code", apps)) == ["code_app"]
    assert app_ids(router.route("运行 fibonacci.py", apps)) == ["code_app"]


@pytest.mark.parametrize(
    "text",
    [
        "统计一下文字",
        "统计这段文字",
        "count the words of a text",
        "统计一下文字：今天天气很好，我们去公园",
        "count the words: the quick brown fox",
    ],
)
def test_counting_words_reaches_the_shipped_text_stats_skill(
    example_skills, apps, text
) -> None:
    """ "统计一下文字" reached no app."""
    plan = SkillRouter(DeterministicRouter(), lambda: example_skills).route(text, apps)
    assert app_ids(plan) == [SKILLS_APP], plan.reason
    assert "text_stats" in plan.reason


def test_the_skills_are_read_only_when_the_words_could_name_one(
    example_skills, apps
) -> None:
    """The listing is the executor's: a claimed request with no word a skill's name
    could be (and no 技能) is routed without asking for it."""
    asked: list[int] = []

    def counted() -> list[dict]:
        asked.append(1)
        return example_skills

    router = SkillRouter(DeterministicRouter(), counted)
    assert app_ids(router.route("帮我播放周杰伦的歌", apps)) == ["music_app"]
    assert asked == []
    assert app_ids(router.route("运行技能 temp_convert 37", apps)) == [SKILLS_APP]
    assert asked == [1]
