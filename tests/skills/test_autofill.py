"""A skill's form filled from the instruction's words, offline, only
where it is unambiguous (`apps/skills_app/autofill.py`). Pure logic over real
`--help` texts: the example skill's own, and argparse's for made-up skills."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

import pytest

from apps.skills_app.autofill import (
    choice_names,
    file_said,
    fill_from_words,
    numbers_said,
    text_said,
)
from tests.procs import ROOT

# the rule runs the example skill's `--help` (a process of its own)
pytestmark = pytest.mark.process


def help_in(lang: str) -> str:
    return subprocess.run(
        [sys.executable, str(ROOT / "skills" / "temp_convert.py"), "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "LANG": lang},
    ).stdout


@pytest.fixture(scope="module")
def helps() -> dict[str, str]:
    """The example skill's help in each language: one is read in the language of
    what was said (the app reads the user's own first: `flows._filled`)."""
    return {"zh": help_in("zh_CN.UTF-8"), "en": help_in("en_US.UTF-8")}


@pytest.fixture
def temp_help(helps: dict[str, str], request: pytest.FixtureRequest) -> str:
    said = (
        request.node.callspec.params.get("said", "")
        if hasattr(request.node, "callspec")
        else ""
    )
    return helps["zh" if re.search(r"[\u4e00-\u9fff]", said) else "en"]


def _help(*options: tuple[tuple[str, ...], dict]) -> str:
    parser = argparse.ArgumentParser(prog="made_up")
    for flags, kw in options:
        parser.add_argument(*flags, **kw)
    return parser.format_help()


@pytest.mark.parametrize(
    ("said", "values"),
    [
        ("把30摄氏度换算成华氏度", {"value": 30, "to": "f"}),
        ("把30摄氏换成华氏", {"value": 30, "to": "f"}),
        ("98.6华氏度是多少摄氏度", {"value": 98.6, "to": "c"}),
        ("零下40摄氏度等于多少华氏度", {"value": -40, "to": "f"}),
        ("convert 30 celsius to fahrenheit", {"value": 30, "to": "f"}),
        ("convert 86 Fahrenheit to Celsius", {"value": 86, "to": "c"}),
        ("how many celsius is -40 fahrenheit", {"value": -40, "to": "c"}),
    ],
)
def test_one_number_and_a_named_target_fill_the_form_and_run(
    temp_help: str, said: str, values: dict
) -> None:
    filling = fill_from_words(temp_help, said)
    assert filling.values == values and filling.complete


@pytest.mark.parametrize(
    ("said", "values", "left"),
    [
        ("把30或40摄氏度换算成华氏度", {"to": "f"}, ["value"]),  # two numbers
        ("把摄氏度换算成华氏度", {"to": "f"}, ["value"]),  # no number
        ("30摄氏度", {"value": 30}, ["to"]),  # the unit it is in, not the one wanted
        ("98.6华氏度和摄氏度", {"value": 98.6}, ["to"]),  # both named, neither the target
    ],
)
def test_what_is_not_clear_is_left_for_the_user_and_nothing_runs(
    temp_help: str, said: str, values: dict, left: list[str]
) -> None:
    filling = fill_from_words(temp_help, said)
    assert filling.values == values
    assert [item.name for item in filling.left] == left and not filling.complete


def test_a_choice_is_named_by_the_words_the_help_gives_it(helps: dict[str, str]) -> None:
    # "f 转成华氏 (默认), c 转成摄氏" / "f for Fahrenheit (default), c for Celsius"
    # — and nothing else in the help
    assert choice_names(helps["zh"], "f") == ["华氏"]
    assert choice_names(helps["zh"], "c") == ["摄氏"]
    assert choice_names(helps["en"], "f") == ["Fahrenheit"]
    assert choice_names(helps["en"], "c") == ["Celsius"]
    text = _help((("--format",), {"choices": ["json", "csv"], "help": "json or csv"}))
    assert choice_names(text, "csv") == ["csv"]  # a word of its own names itself
    filling = fill_from_words(text, "export the list as CSV")
    assert filling.values == {"format": "csv"} and filling.complete
    assert not fill_from_words(text, "json or csv?").complete


def test_numbers_are_digits_standing_alone() -> None:
    assert numbers_said("把30摄氏度 mp3 v2 x86_64 1.2.3 temp-3") == [30]
    assert numbers_said("零下5度, -7, −2.5, 负3, 30C") == [-5, -7, -2.5, -3, 30]


def test_an_option_is_numeric_by_its_default_or_its_words() -> None:
    text = _help(
        (("-n", "--count"), {"type": int, "default": 3, "help": "how often (default: 3)"}),
        (("--name",), {"help": "who"}),
    )
    filling = fill_from_words(text, "greet 5 times")
    assert filling.values == {"count": 5} and filling.complete
    named = _help((("-n", "--name"), {"help": "who"}))  # -n is no number
    assert fill_from_words(named, "greet 5 times").unused == [5]
    assert fill_from_words(text, "greet").values == {"count": 3}  # its default
    two = _help(
        (("--width",), {"type": int, "default": 1, "help": "(default: 1)"}),
        (("--height",), {"type": int, "default": 1, "help": "(default: 1)"}),
    )
    assert [i.name for i in fill_from_words(two, "a 3 by 4 box").left] == [
        "width",
        "height",
    ]
    assert [i.name for i in fill_from_words(two, "a 3 box").left] == ["width", "height"]
    assert fill_from_words(two, "a box").values == {"width": 1, "height": 1}


def test_a_skill_that_cannot_take_what_was_said_does_not_run() -> None:
    no_options = _help()
    assert fill_from_words(no_options, "tonight's moon").complete
    moon = fill_from_words(no_options, "the moon on the 3rd")
    assert moon.unused == [3] and not moon.complete  # a number nothing takes
    a_file = _help((("-f", "--file"), {"required": True, "help": "the file"}))
    assert [i.name for i in fill_from_words(a_file, "count my notes").left] == ["file"]
    flag = _help(
        (("-n", "--number"), {"type": int, "required": True, "help": "a number"}),
        (("--twice",), {"action": "store_true", "help": "say it twice"}),
    )
    assert fill_from_words(flag, "say 5").values == {"number": 5}
    assert fill_from_words(flag, "say 5").complete
    twice = fill_from_words(flag, "say 5 twice")  # on or off is the user's to say
    assert [i.name for i in twice.left] == ["twice"] and not twice.complete


@pytest.mark.parametrize(
    ("said", "text", "rest"),
    [
        (
            "统计一下文字：今天天气很好，我们去公园",
            "今天天气很好，我们去公园",
            "统计一下文字",
        ),
        ("count the words: the quick brown fox", "the quick brown fox", "count the words"),
        ("统计「我有3个苹果」的字数", "我有3个苹果", "统计的字数"),
        ('count the words of "a b c" please', "a b c", "count the words of  please"),
        ("统计一下文字", None, None),
        ('count "a" and "b"', None, None),  # two texts: which one is not clear
    ],
)
def test_a_text_is_what_follows_a_colon_or_stands_in_quotes(said, text, rest) -> None:
    assert text_said(said) == (None if text is None else (text, rest))


def test_a_text_option_takes_the_text_said_and_its_numbers_stay_in_it() -> None:
    """--text takes the words after the colon; the 3 in them fills no number option,
    and a file option ("the file to count") is neither a text nor a number."""
    text = _help(
        (("-t", "--text"), {"help": "the text to count"}),
        (("-f",), {"metavar": "FILE", "help": "the file to count"}),
        (("-n", "--top"), {"type": int, "default": 5, "help": "how many (default: 5)"}),
    )
    filling = fill_from_words(text, "count the words: I have 3 apples")
    assert filling.values == {"text": "I have 3 apples", "top": 5} and filling.complete
    top = fill_from_words(text, "the 2 longest words of: I have 3 apples")
    assert top.values == {"text": "I have 3 apples", "top": 2}
    assert fill_from_words(text, "count the words").values == {"top": 5}  # no text said
    said_in_help = _help((("--say",), {"metavar": "WORDS", "help": "the sentence to say"}))
    assert fill_from_words(said_in_help, "say: hello").values == {"say": "hello"}
    two = _help((("--text",), {}), (("--other",), {"metavar": "TEXT"}))
    assert fill_from_words(two, "count: hello").values == {}  # which one is not clear


def text_stats_help(lang: str) -> str:
    return subprocess.run(
        ["bash", str(ROOT / "skills" / "text_stats.sh"), "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "LANG": lang},
    ).stdout


WORKSPACE = {"notes.txt", "docs/plan.md", "my notes.md", "2024.csv"}


@pytest.mark.parametrize(
    ("lang", "said", "values", "missing"),
    [
        ("zh_CN.UTF-8", "统计一下notes.txt的行数和字数", {"f": "notes.txt"}, []),
        ("en_US.UTF-8", "count the lines and words of notes.txt", {"f": "notes.txt"}, []),
        ("en_US.UTF-8", "count the words of docs/plan.md", {"f": "docs/plan.md"}, []),
        ("zh_CN.UTF-8", "统计2024.csv有几行", {"f": "2024.csv"}, []),  # no number
        ("zh_CN.UTF-8", "统计「my notes.md」的字数", {"f": "my notes.md"}, []),
        ("zh_CN.UTF-8", "统计一下文字：notes.txt", {"f": "notes.txt"}, []),
        # named, not there: the skill does not run, the name is said
        ("zh_CN.UTF-8", "统计一下todo.txt的行数", {"f": "todo.txt"}, ["todo.txt"]),
        ("en_US.UTF-8", 'count the words of "todo.md"', {"f": "todo.md"}, ["todo.md"]),
        # a text given is the text's, with the names inside it
        ("zh_CN.UTF-8", "统计文字「我有3个苹果」", {"text": "我有3个苹果"}, []),
        (
            "en_US.UTF-8",
            "count the words: see notes.txt",
            {"text": "see notes.txt"},
            [],
        ),
    ],
)
def test_a_file_named_in_the_request_fills_the_file_option(
    lang: str, said: str, values: dict, missing: list[str]
) -> None:
    """text_stats's -f takes the file the request names: a word with an extension
    the workspace holds, or a name in quotes; one it does not hold is `missing`,
    and nothing runs."""
    filling = fill_from_words(text_stats_help(lang), said, WORKSPACE.__contains__)
    assert filling.values == values and filling.missing == missing
    assert filling.complete is (not missing) and filling.unused == []


def test_which_words_name_files() -> None:
    there = {"notes.txt"}.__contains__
    assert file_said("统计一下notes.txt的行数", there) == (["notes.txt"], "统计一下 的行数")
    # not in the workspace: no file of it; not known: any name with an extension
    assert file_said("统计一下todo.txt的行数", there)[0] == []
    assert file_said("统计一下todo.txt的行数")[0] == ["todo.txt"]
    for no_file in ("version 3.5", "e.g. this", "v1.2", "30 °C"):
        assert file_said(no_file) == ([], no_file), no_file
    two = fill_from_words(
        text_stats_help("en_US.UTF-8"), "count notes.txt and todo.txt", there
    )
    assert [i.name for i in two.left] == ["f"] and not two.complete  # which one?
