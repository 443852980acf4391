"""What a skill is (Aibox's rules), read from real files in a temporary folder.

`--help` runs for real here (a plain subprocess with the format's 10 s limit; the
provider tests run it in the sandbox).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import threading
from pathlib import Path

from executor.skills.catalog import (
    HELP_TIMEOUT,
    FolderScan,
    HelpRun,
    help_summary,
    markdown_parts,
    read_frontmatter,
    skill_body,
)
from tests.skills.conftest import PY_SKILL, write_skill


def run_help(
    path: Path, folder: Path, lang: str = "C.UTF-8", timeout: float = HELP_TIMEOUT
) -> HelpRun:
    try:
        done = subprocess.run(
            [str(path), "--help"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={**os.environ, "LANG": lang},
        )
    except subprocess.TimeoutExpired:
        return HelpRun("", "", None, timed_out=True, timeout=timeout)
    return HelpRun(done.stdout, done.stderr, done.returncode)


def test_the_format_limits_help_to_ten_seconds() -> None:
    assert HELP_TIMEOUT == 10.0


def test_summary_is_the_first_line_or_the_argparse_description() -> None:
    assert help_summary("\n\n  温度转换工具\n用法: x\n") == "温度转换工具"
    parser = argparse.ArgumentParser(prog="t", description="Convert temperatures")
    parser.add_argument("-v", "--value", required=True)
    assert parser.format_help().startswith("usage:")
    assert help_summary(parser.format_help()) == "Convert temperatures"
    # a usage block that wraps onto several lines is skipped whole
    wide = argparse.ArgumentParser(prog="wide", description="Wide one")
    for n in range(12):
        wide.add_argument(f"--option-number-{n}", metavar="VALUE")
    assert len(wide.format_usage().splitlines()) > 1
    assert help_summary(wide.format_help()) == "Wide one"
    # no description: the usage line is all there is
    bare = argparse.ArgumentParser(prog="bare")
    assert help_summary(bare.format_help()) == "usage: bare [-h]"


def test_markdown_summary_drops_the_hashes_and_content_is_the_rest() -> None:
    summary, content = markdown_parts("\n# 代码审查指南\n\n## 技能说明\n步骤\n")
    assert summary == "代码审查指南"
    assert content.strip() == "## 技能说明\n步骤"
    assert markdown_parts("just a line") == ("just a line", "")


def test_frontmatter_is_read_with_yaml() -> None:
    meta, body = read_frontmatter(
        "---\nname: pdf\ndescription: 'Fill PDF forms: fields'\nallowed-tools: [file_read]\n"
        "metadata:\n  version: 2\n---\n# Steps\n1. read\n"
    )
    assert meta == {
        "name": "pdf",
        "description": "Fill PDF forms: fields",
        "allowed-tools": ["file_read"],
        "metadata": {"version": 2},
    }
    assert body == "# Steps\n1. read"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "skills"
    write_skill(folder, "greet", PY_SKILL.format(name="greet", summary="Say a number"))
    write_skill(
        folder,
        "shout",
        '#!/bin/bash\n[ "$1" = "--help" ] && { echo "大声说话"; echo; echo "用法: shout TEXT"; exit 0; }\necho "$1"\n',
    )
    write_skill(folder, "stderr_only", '#!/bin/bash\necho "help on stderr" >&2\n')
    write_skill(folder, "review.md", "# 代码审查指南\n\n步骤一\n", executable=False)
    write_skill(
        folder / "pdf",
        "SKILL.md",
        "---\nname: pdf\ndescription: Fill PDF forms\nallowed-tools: file_read file_write\n---\nBody\n",
        executable=False,
    )
    # ignored: drafts, hidden files, a folder without SKILL.md
    write_skill(folder, "_draft", "#!/bin/sh\necho draft\n")
    write_skill(folder, ".hidden.md", "# hidden\n", executable=False)
    (folder / "notes").mkdir()
    # broken, each for its own reason
    write_skill(folder, "tool.py", PY_SKILL.format(name="tool", summary="x"))
    write_skill(folder, "plain", "#!/bin/sh\necho no exec bit\n", executable=False)
    write_skill(folder, "bad name.md", "# spaced\n", executable=False)
    write_skill(folder, "silent", "#!/bin/sh\nexit 3\n")
    write_skill(folder, "empty.md", "\n\n", executable=False)
    write_skill(folder / "broken", "SKILL.md", "---\nname: [oops\n---\n", executable=False)
    write_skill(
        folder / "unnamed", "SKILL.md", "---\ndescription: x\n---\n", executable=False
    )
    write_skill(
        folder / "other",
        "SKILL.md",
        "---\nname: else\ndescription: x\n---\n",
        executable=False,
    )
    outside = tmp_path / "secret.md"
    outside.write_text("# secret\n")
    os.symlink(outside, folder / "link.md")
    return folder


def test_a_folder_lists_each_kind_and_each_broken_skill_with_its_reason(
    tmp_path: Path,
) -> None:
    skills = {s.name: s for s in FolderScan(_folder(tmp_path), "shared", run_help).scan()}
    assert (
        skills["greet"].kind == "executable" and skills["greet"].summary == "Say a number"
    )
    assert "--number" in skills["greet"].content and skills["greet"].usable
    assert (
        skills["shout"].summary == "大声说话"
        and "用法: shout TEXT" in skills["shout"].content
    )
    assert skills["stderr_only"].summary == "help on stderr"
    assert (skills["review"].kind, skills["review"].summary) == ("markdown", "代码审查指南")
    assert skills["review"].content.strip() == "步骤一"
    pdf = skills["pdf"]
    assert (pdf.kind, pdf.summary, pdf.allowed_tools) == (
        "folder",
        "Fill PDF forms",
        ("file_read", "file_write"),
    )
    assert pdf.content == "Fill PDF forms"  # the body is read only when used
    assert not {"_draft", ".hidden", "notes", "hidden"} & set(skills)
    reasons = {name: s.error for name, s in skills.items() if s.error}
    assert set(reasons) == {
        "tool.py",
        "plain",
        "bad name",
        "silent",
        "empty",
        "broken",
        "unnamed",
        "other",
        "link",
    }
    assert "without its extension" in reasons["tool.py"]
    assert "not executable" in reasons["plain"]
    assert "bad name" in reasons["bad name"]
    assert "printed nothing" in reasons["silent"] and "exit code 3" in reasons["silent"]
    assert "empty" in reasons["empty"]
    assert "not valid YAML" in reasons["broken"]
    assert "no 'name'" in reasons["unnamed"]
    assert "'else'" in reasons["other"]
    assert "outside its skills folder" in reasons["link"]


def test_a_skill_that_hangs_or_floods_is_listed_with_the_reason(tmp_path: Path) -> None:
    folder = tmp_path / "skills"
    write_skill(folder, "hang", "#!/bin/sh\nsleep 30\n")
    write_skill(
        folder,
        "flood",
        "#!/bin/sh\nwhile :; do echo flooding flooding; done | head -c 300000\n",
    )
    write_skill(folder, "fine", "#!/bin/sh\necho fine\n")
    skills = {
        s.name: s
        for s in FolderScan(
            folder, "shared", lambda p, f, lang: run_help(p, f, lang, timeout=1.0)
        ).scan()
    }
    assert skills["hang"].error == "--help did not answer within 1 s"
    assert "more than 16000 characters" in (skills["flood"].error or "")
    assert len(skills["flood"].content) < 16_100 and skills["flood"].summary
    assert skills["fine"].usable and skills["fine"].summary == "fine"


def test_help_runs_once_per_version_of_a_file_and_language(tmp_path: Path) -> None:
    folder = tmp_path / "skills"
    path = write_skill(folder, "count", "#!/bin/sh\necho first\n")
    runs: list[tuple[Path, str]] = []

    def counting(p: Path, f: Path, lang: str) -> HelpRun:
        runs.append((p, lang))
        return run_help(p, f, lang)

    scan = FolderScan(folder, "shared", counting)
    once = [(path, "zh_CN.UTF-8"), (path, "en_US.UTF-8")]
    assert [s.summary for s in scan.scan()] == ["first"]
    assert [s.summary for s in scan.scan()] == ["first"] and runs == once
    path.write_text("#!/bin/sh\necho second version\n")
    os.utime(path, ns=(1, 2))  # a different stamp even within one clock tick
    assert [s.summary for s in scan.scan()] == ["second version"] and runs == once * 2
    path.unlink()
    assert scan.scan() == []
    scan.forget()
    assert scan.scan() == []


def test_the_entries_of_a_folder_are_read_side_by_side(tmp_path: Path) -> None:
    """Two changed entries' `--help` run at once, so one that hangs until its
    limit holds up the folder's read once, not once per hanging skill."""
    folder = tmp_path / "skills"
    for name in ("one", "two"):
        write_skill(folder, name, f"#!/bin/sh\necho {name}\n")
    both_running = threading.Barrier(2, timeout=10)  # broken when read one by one

    def meeting(p: Path, f: Path, lang: str) -> HelpRun:
        both_running.wait()
        return run_help(p, f, lang)

    skills = FolderScan(folder, "shared", meeting).scan()
    assert [(s.name, s.summary) for s in skills] == [("one", "one"), ("two", "two")]


BY_LANG = """#!/bin/sh
case "$LANG" in
  zh*) echo "问候 - 说一声你好" ;;
  *) echo "Greeting - says hello" ;;
esac
"""


def test_a_skill_keeps_one_summary_and_help_per_language(tmp_path: Path) -> None:
    """`--help` runs once per language with its LANG, and each
    language keeps its own summary; a skill answering in one language has that one."""
    folder = tmp_path / "skills"
    write_skill(folder, "greet", BY_LANG)
    write_skill(folder, "plain", "#!/bin/sh\necho only one way\n")
    skills = {s.name: s for s in FolderScan(folder, "shared", run_help).scan()}
    greet = skills["greet"]
    assert greet.summaries == {
        "zh-CN": "问候 - 说一声你好",
        "en-US": "Greeting - says hello",
    }
    assert greet.contents["en-US"] == "Greeting - says hello"
    assert greet.summary == "问候 - 说一声你好"  # the first language's
    assert greet.listed()["summaries"] == greet.summaries
    assert skills["plain"].summaries == {"zh-CN": "only one way", "en-US": "only one way"}


def test_the_shipped_examples_answer_help_in_the_language_of_lang(tmp_path: Path) -> None:
    """No Chinese in an English summary or help, and the Chinese ones are Chinese."""
    root = Path(__file__).resolve().parents[2] / "skills"
    for name in ("temp_convert.py", "text_stats.sh"):
        zh = run_help(root / name, root, "zh_CN.UTF-8").stdout
        en = run_help(root / name, root, "en_US.UTF-8").stdout
        assert re.search(r"[\u4e00-\u9fff]", zh), name
        assert not re.search(r"[\u4e00-\u9fff]", en), (name, en)
        assert "(" not in help_summary(zh), name  # no English gloss beside it


def test_a_markdown_skill_keeps_its_steps_in_each_language(tmp_path: Path) -> None:
    """A line `<!-- en-US -->` starts a Markdown skill's part in that language: its
    first line is the summary in that language, the rest the steps; the text before
    any mark is everyone else's. The shipped code_review has both languages, each
    in its own words only."""
    folder = tmp_path / "skills"
    write_skill(
        folder,
        "walk.md",
        "# 散步\n走一走\n<!-- en-US -->\n# A walk\nwalk a bit\n<!-- fr-FR -->\n# Promenade\n",
        executable=False,
    )
    write_skill(folder, "plain.md", "# only one\nstep\n", executable=False)
    skills = {s.name: s for s in FolderScan(folder, "shared", run_help).scan()}
    walk = skills["walk"]
    assert (walk.summary, walk.content) == ("散步", "走一走")
    assert walk.summaries == {"en-US": "A walk"}
    assert (walk.summary_in("en-US"), walk.content_in("en-US")) == ("A walk", "walk a bit")
    assert (walk.summary_in("zh-CN"), walk.content_in("zh-CN")) == ("散步", "走一走")
    assert skill_body(walk, "en-US") == "walk a bit" and skill_body(walk) == "走一走"
    plain = skills["plain"]
    assert plain.summary_in("en-US") == "only one" and plain.contents == {}
    root = Path(__file__).resolve().parents[2] / "skills"
    review = FolderScan(root, "shared", run_help).scan()
    (code_review,) = [s for s in review if s.name == "code_review"]
    english = code_review.summary_in("en-US") + code_review.content_in("en-US")
    chinese = code_review.summary_in("zh-CN") + code_review.content_in("zh-CN")
    assert code_review.summary_in("en-US") == "Code review checklist"
    assert not re.search(r"[\u4e00-\u9fff]", english), english
    assert code_review.summary_in("zh-CN") == "代码审查指南"
    assert "file_read" in chinese and not re.search(r"\b(the|review)\b", chinese)
