"""The deterministic router on instructions it was not tuned on, and its evidence rules.

`routing_heldout.json` holds realistic phrasings written apart from the routing
set: every case must route exactly (apps and dependencies), no-app cases and the
`ambiguous` list must stay below `CONFIDENT` (so the LLM router is asked), and the
share answered confidently must stay well above the benchmark's goal line.

The evidence rules (a word inside another app's keyword hit, an app named as the
object of another app's request, a repeated keyword) are also checked on small
made-up manifests, so they hold for any installed apps, not only the shipped four.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.routing.index import RoutingIndex
from controller.routing.router import AppProfile, DeterministicRouter
from tests.controller.test_router import ROUTING_SET, app_ids, shipped_apps

HELDOUT = Path(__file__).with_name("routing_heldout.json")
CONFIDENT = DeterministicRouter.CONFIDENT


@pytest.fixture(scope="module")
def apps() -> tuple[AppProfile, ...]:
    return shipped_apps()


@pytest.fixture(scope="module")
def heldout() -> dict:
    return json.loads(HELDOUT.read_text(encoding="utf-8"))


def sure(plan) -> bool:
    return bool(plan.tasks) and plan.confidence >= CONFIDENT


def test_heldout_set_is_new_and_broad(heldout, apps):
    cases = heldout["cases"]
    known = {c["text"] for c in json.loads(ROUTING_SET.read_text("utf-8"))["cases"]}
    assert len(cases) >= 30
    assert not {c["text"] for c in cases} & known  # no copies of the routing set
    assert sum(1 for c in cases if not c["apps"]) >= 6
    assert sum(1 for c in cases if len(c["apps"]) >= 2) >= 5
    assert {a for c in cases for a in c["apps"]} == {p.app_id for p in apps}
    assert any(not c["text"].isascii() for c in cases)
    assert any(c["text"].isascii() for c in cases)


def test_heldout_routes_exactly_and_confidently(heldout, apps):
    router = DeterministicRouter()
    wrong, confident = [], 0
    for case in heldout["cases"]:
        plan = router.route(case["text"], apps)
        deps = case.get("depends_on", [[] for _ in case["apps"]])
        got = (app_ids(plan), [task.depends_on for task in plan.tasks])
        if got != (case["apps"], deps):
            wrong.append((case["text"], case["apps"], got, round(plan.confidence, 2)))
        if not case["apps"]:
            assert not sure(plan), (case["text"], plan.reason)
        confident += sure(plan)
    share = confident / len(heldout["cases"])
    print(f"held-out: {confident}/{len(heldout['cases'])} confident ({share:.1%})")
    assert wrong == []
    assert share >= 0.75


def test_ambiguous_instructions_stay_unconfident(heldout, apps):
    router = DeterministicRouter()
    assert len(heldout["ambiguous"]) >= 5
    for text in heldout["ambiguous"]:
        plan = router.route(text, apps)
        assert plan.tasks and not sure(plan), (text, plan.reason)


# Small made-up installs: the rules must not depend on the shipped vocabulary.
PLAYER = AppProfile("player", "播放器", keywords=("播放", "暂停", "play", "听"))
DESKTOP = AppProfile(
    "desktop",
    "桌面",
    keywords=("播放键", "play button", "窗口", "关闭", "最大化", "close", "window"),
)
EDITOR = AppProfile("editor", "编辑器", keywords=("代码", "code", "运行"))
CROWD = (PLAYER, DESKTOP, EDITOR)


def fits_of(text: str) -> dict[str, object]:
    return {fit.app_id: fit for fit in RoutingIndex.build(CROWD).score(text)}


@pytest.mark.parametrize(
    ("text", "app_id"), [("停止播放", "player"), ("stop play now", "player")]
)
def test_a_word_inside_another_apps_keyword_is_not_its_evidence(text, app_id):
    # the desktop's vocabulary holds "播放" / "play" only inside longer phrases
    assert set(fits_of(text)) == {app_id}
    assert sure(DeterministicRouter().route(text, CROWD))
    # …but where the longer phrase is said, it wins and the shorter one is dropped
    plan = DeterministicRouter().route("把播放键移走", CROWD)
    assert app_ids(plan) == ["desktop"]


@pytest.mark.parametrize(
    "text", ["close the code window", "关闭代码窗口", "把代码窗口最大化", "关闭代码的窗口"]
)
def test_an_app_named_inside_another_apps_phrase_is_its_object(text):
    fits = fits_of(text)
    assert fits["editor"].argument and not fits["desktop"].argument
    plan = DeterministicRouter().route(text, CROWD)
    assert app_ids(plan) == ["desktop"] and sure(plan)


@pytest.mark.parametrize("text", ["关闭代码", "close code", "运行代码窗口", "code window"])
def test_a_rival_outside_the_phrase_keeps_the_doubt(text):
    assert not any(fit.argument for fit in fits_of(text).values())
    plan = DeterministicRouter().route(text, CROWD)
    assert not sure(plan), (text, plan.reason)


def test_a_repeated_keyword_is_one_piece_of_evidence():
    once, twice = fits_of("我想听意见")["player"], fits_of("我想听听意见")["player"]
    assert twice.keyword == once.keyword
    assert not sure(DeterministicRouter().route("我想听听你的意见", shipped_apps()))
