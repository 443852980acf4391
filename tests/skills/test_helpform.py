"""A skill's `--help` read into form fields (argparse's format is the contract) and back."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from aios_sdk import Turn
from apps.skills_app.helpform import build_argv, form_fields, parse_help

ROOT = Path(__file__).resolve().parents[2]
ZH = Turn(context={"language": "zh-CN"})
EN = Turn(context={"language": "en-US"})


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mailer", description="发送邮件")
    parser.add_argument("recipient", help="who gets it")
    parser.add_argument("-s", "--subject", required=True, help="标题")
    parser.add_argument("--max-retries", type=int, default=3, help="retries (default: 3)")
    parser.add_argument("--ratio", type=float, default=0.5, help="a ratio (默认 0.5)")
    parser.add_argument(
        "--mode", choices=["plain", "html"], default="html", help="格式 (默认: html)"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no output")
    parser.add_argument(
        "--note",
        help="a long help text that argparse wraps onto a second line because "
        "it goes on and on for a while",
    )
    return parser


def test_argparse_help_becomes_fields() -> None:
    fields = {f["name"]: f for f in form_fields(_parser().format_help(), ZH)}
    assert list(fields) == [
        "recipient",
        "subject",
        "max_retries",
        "ratio",
        "mode",
        "quiet",
        "note",
    ]
    assert fields["recipient"]["required"] is True and fields["recipient"]["type"] == "text"
    assert fields["subject"]["required"] is True and "标题" in fields["subject"]["label"]
    assert fields["max_retries"] == {**fields["max_retries"], "type": "number", "value": 3}
    assert "required" not in fields["max_retries"]
    assert fields["ratio"]["type"] == "number" and fields["ratio"]["value"] == 0.5
    assert fields["mode"]["type"] == "select" and fields["mode"]["options"] == [
        "plain",
        "html",
    ]
    assert fields["mode"]["value"] == "html"
    assert fields["quiet"]["type"] == "checkbox" and fields["quiet"]["value"] is False
    assert "goes on and on for a while" in fields["note"]["label"]
    assert "help" not in fields  # -h/--help is never a field


def test_values_become_an_argv_the_parser_accepts() -> None:
    parser = _parser()
    fields = parse_help(parser.format_help())
    argv = build_argv(
        "mailer",
        fields,
        {
            "recipient": "bob@example.com",
            "subject": "你好 世界",
            "max_retries": 5.0,
            "ratio": 0.25,
            "mode": "plain",
            "quiet": True,
            "note": "",
        },
    )
    assert argv == [
        "mailer",
        "--subject",
        "你好 世界",
        "--max-retries",
        "5",
        "--ratio",
        "0.25",
        "--mode",
        "plain",
        "--quiet",
        "bob@example.com",
    ]
    parsed = parser.parse_args(argv[1:])
    assert (parsed.recipient, parsed.subject, parsed.max_retries, parsed.quiet) == (
        "bob@example.com",
        "你好 世界",
        5,
        True,
    )


def test_the_shipped_examples_help_is_read() -> None:
    text = subprocess.run(
        [str(ROOT / "skills" / "temp_convert.py"), "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    fields = {f["name"]: f for f in form_fields(text, ZH)}
    assert list(fields) == ["value", "to"]  # the epilog's repeat adds nothing
    assert fields["value"]["required"] is True
    assert fields["to"]["type"] == "select" and fields["to"]["options"] == ["f", "c"]
    text = subprocess.run(
        [str(ROOT / "skills" / "text_stats.sh"), "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    text_option, file_option = parse_help(text)
    assert (text_option.flag, text_option.metavar) == ("--text", "TEXT")
    assert (file_option.flag, file_option.takes_value) == ("-f", True)
    fields = [text_option, file_option]
    assert build_argv("text_stats", fields, {"f": "notes.txt"}) == [
        "text_stats",
        "-f",
        "notes.txt",
    ]
    assert build_argv("text_stats", fields, {"text": "a b"}) == [
        "text_stats",
        "--text",
        "a b",
    ]


def test_text_that_is_no_help_gives_no_fields() -> None:
    assert form_fields("", ZH) == []
    assert form_fields("# 代码审查指南\n\n1. read the code\n- a dash item\n", ZH) == []


def test_labels_say_what_a_field_is_in_plain_words() -> None:
    """A label is what the skill's help says ("标题", "Who gets
    it"), never the command line's flags ("-s / --subject"); a field without help
    is called by its name in words."""
    parser = _parser()
    parser.add_argument("--max-count", type=int)
    text = parser.format_help()
    chinese = {f["name"]: f for f in form_fields(text, ZH)}
    english = {f["name"]: f for f in form_fields(text, EN)}
    assert chinese["subject"]["label"] == english["subject"]["label"] == "标题"
    assert english["recipient"]["label"] == "Who gets it"
    assert english["quiet"]["label"] == "No output"
    assert english["note"]["label"].endswith("goes on and on for a while")
    assert english["max_count"]["label"] == "Max count"
    assert not any("-" in f["label"][:2] for f in english.values())
    assert english == chinese  # the words are the skill's: its help's language
