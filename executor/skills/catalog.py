"""What a skill is (a folder with a SKILL.md) and how one skills folder is read into `Skill`s.

A skills folder holds three kinds of entry. An *executable* skill is a file not
ending in `.md` that has the execute bit; its summary is the first non-empty line
`<skill> --help` prints on stdout (stderr when stdout is empty) — when that line is
an argparse `usage:` block, the first line after the block (the `description`) —
and its content is the whole help text. `--help` runs once per language a person
reads (`LOCALES`: `LANG=zh_CN.UTF-8`, then `LANG=en_US.UTF-8`), and the skill keeps
one summary and one help text per language (`summaries`, `contents`; `summary` and
`content` are the first language's); a skill that answers in one language only has
that answer for both. A *Markdown* skill is a `.md` file: summary
its first non-empty line without leading `#`, content the rest; a front matter may
give its summary in each language (`summaries`), and a line `<!-- en-US -->` starts
its part in that language (that part's first line its summary in that language, the
rest its content: `summaries`, `contents`). A *folder* holding
`SKILL.md` (the Agent Skills format) is a skill too: its YAML frontmatter gives
`name` (the folder's own name), `description` (the summary), optional
`allowed-tools` and `metadata`; its body is read only when the skill is used
(`skill_body`). A name has only letters, digits, `_` and `-`; entries whose name
starts with `_` or `.` are ignored. Anything else wrong — a bad name, no execute
bit, a `--help` that hangs past `HELP_TIMEOUT`, prints nothing or floods more than
`MAX_HELP_CHARS`, a broken frontmatter, a link out of the folder — yields a `Skill`
with `error` set, listed but never run, and never stops the other entries.
`FolderScan` reads a folder again cheaply: an entry whose file did not change keeps
its earlier reading (so `--help` runs once per version of a file). `--help` itself
is run by the caller's `HelpRunner` (the provider runs it in the sandbox).
"""

from __future__ import annotations

import os
import re
import stat
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import yaml

from aios_runtime.workdir import is_inside

__all__ = [
    "HELP_TIMEOUT",
    "LOCALES",
    "MAX_HELP_CHARS",
    "SKILL_FILE",
    "FolderScan",
    "HelpRun",
    "HelpRunner",
    "Skill",
    "SkillKind",
    "bad_name",
    "help_summary",
    "ignored_name",
    "markdown_parts",
    "read_entry",
    "read_frontmatter",
    "skill_body",
]

SkillKind = Literal["executable", "markdown", "folder"]

HELP_TIMEOUT = 10.0  # seconds `<skill> --help` may take (the format's limit)
MAX_HELP_CHARS = 16_000  # a longer help text is a flood: listed with the reason
MAX_MARKDOWN_BYTES = 256_000  # a Markdown skill or SKILL.md read at most this far
SKILL_FILE = "SKILL.md"
READERS = 4  # entries of one folder read (their `--help` run) at a time
_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_LANGUAGE_MARK = re.compile(r"^<!--\s*(?P<lang>[A-Za-z]{2}-[A-Za-z]{2})\s*-->[ \t]*$", re.M)
_SECTION_HEADS = ("options:", "optional arguments:", "positional arguments:")
# the languages a person reads → the `LANG` a skill's `--help` runs with for them;
# the first is the language of `summary` and `content`
LOCALES = {"zh-CN": "zh_CN.UTF-8", "en-US": "en_US.UTF-8"}


@dataclass(frozen=True)
class Skill:
    """One entry of a skills folder (`error` set: listed, never run)."""

    name: str
    kind: SkillKind
    path: Path  # the file, or the folder of a SKILL.md skill
    source: str  # "shared" or "workspace"
    folder: Path  # the skills folder it was found in
    summary: str = ""
    content: str = ""
    error: str | None = None
    # a SKILL.md's `allowed-tools`: None when it states none (no limit); an empty
    # tuple allows no tool at all
    allowed_tools: tuple[str, ...] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    # a SKILL.md's `context: fork`: the skill runs as a sub-agent of its own
    forks: bool = False
    # an executable's summary and help text per language (`LOCALES`), a Markdown
    # skill's from its front matter and its language parts; a SKILL.md has one text
    summaries: dict[str, str] = field(default_factory=dict)
    contents: dict[str, str] = field(default_factory=dict)

    def summary_in(self, language: str) -> str:
        return self.summaries.get(language) or self.summary

    def content_in(self, language: str) -> str:
        return self.contents.get(language) or self.content

    @property
    def usable(self) -> bool:
        return self.error is None

    def listed(self) -> dict[str, Any]:
        """The short form: what a listing of every skill shows."""
        return {
            "name": self.name,
            "kind": self.kind,
            "summary": self.summary,
            "summaries": {lang: self.summary_in(lang) for lang in LOCALES},
            "source": self.source,
            "folder": str(self.folder),
            "error": self.error,
        }


@dataclass(frozen=True)
class HelpRun:
    """What `<skill> --help` did."""

    stdout: str
    stderr: str
    returncode: int | None
    timed_out: bool = False
    timeout: float = HELP_TIMEOUT  # the limit it ran under


# (the skill's file, its skills folder, the `LANG` to run it with) → what its
# `--help` printed
HelpRunner = Callable[[Path, Path, str], HelpRun]


def ignored_name(name: str) -> bool:
    """Entries starting with `_` or `.` are not skills (drafts, editors' files)."""
    return name.startswith(("_", "."))


def bad_name(name: str) -> str | None:
    """Why `name` cannot name a skill, or None."""
    if _NAME.match(name):
        return None
    return f"bad name {name!r}: a skill's name has only letters, digits, '_' and '-'"


def help_summary(text: str) -> str:
    """The summary of a help text: its first non-empty line, or, when that opens an
    argparse `usage:` block, the first non-empty line after the block (the
    description); a usage block followed by no description is its own summary."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return ""
    if not lines[first].lstrip().lower().startswith("usage:"):
        return lines[first].strip()
    end = first + 1
    while end < len(lines) and lines[end].strip():  # the usage block's wrapped lines
        end += 1
    after = next((line.strip() for line in lines[end:] if line.strip()), "")
    if not after or after.lower() in _SECTION_HEADS:
        return lines[first].strip()
    return after


def markdown_parts(text: str) -> tuple[str, str]:
    """(summary, content) of a Markdown skill: the first non-empty line without its
    leading `#`s, and everything after that line."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.strip():
            summary = line.strip().lstrip("#").strip()
            return summary, "\n".join(lines[index + 1 :]).strip("\n")
    return "", ""


def read_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """(frontmatter, body) of a SKILL.md; `ValueError` saying what is wrong.

    The frontmatter is the YAML between a first line `---` and the next line `---`.
    """
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise ValueError("SKILL.md does not start with a '---' frontmatter block")
    close = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if close is None:
        raise ValueError("SKILL.md's frontmatter has no closing '---'")
    try:
        data = yaml.safe_load("".join(lines[1:close]))
    except yaml.YAMLError as exc:
        raise ValueError(f"SKILL.md's frontmatter is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError("SKILL.md's frontmatter is not a mapping of fields")
    return data, "".join(lines[close + 1 :]).strip("\n")


def _markdown_summaries(text: str) -> tuple[dict[str, str], str]:
    """(summary per language, the rest) of a Markdown skill: an optional front
    matter may say its summary in each language (`summaries: {zh-CN: …, en-US: …}`)."""
    if not text.startswith("---"):
        return {}, text
    meta, body = read_frontmatter(text)
    said = meta.get("summaries") or {}
    if not isinstance(said, dict):
        raise ValueError("the front matter's 'summaries' must map languages to text")
    return {str(k): " ".join(str(v).split()) for k, v in said.items() if k in LOCALES}, body


def _language_parts(body: str) -> tuple[str, dict[str, str]]:
    """(the text before any language mark, each language's part) of a Markdown
    skill: a line `<!-- en-US -->` starts the part in that language (a language
    outside `LOCALES` is read by no one)."""
    marks = list(_LANGUAGE_MARK.finditer(body))
    if not marks:
        return body, {}
    parts = {}
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(body)
        if mark.group("lang") in LOCALES:
            parts[mark.group("lang")] = body[mark.end() : end]
    return body[: marks[0].start()], parts


def _markdown_skill(name: str, path: Path, source: str, folder: Path, text: str) -> Skill:
    """A Markdown skill from its text: the front matter's summaries, then the part
    before any language mark (else the first language's part) as its summary and
    content, and each language's part as that language's summary and content."""
    summaries, body = _markdown_summaries(text)
    first, parts = _language_parts(body)
    if not first.strip() and parts:
        first = next(iter(parts.values()))
    summary, content = markdown_parts(first)
    contents = {}
    for language, part in parts.items():
        said, steps = markdown_parts(part)
        summaries.setdefault(language, said)
        contents[language] = steps
    return Skill(
        name,
        "markdown",
        path,
        source,
        folder,
        summary=summaries.get(next(iter(LOCALES)), summary) if summary else "",
        content=content,
        summaries=summaries,
        contents=contents,
    )


def _read_text(path: Path) -> str:
    with open(path, "rb") as handle:
        data = handle.read(MAX_MARKDOWN_BYTES + 1)
    if len(data) > MAX_MARKDOWN_BYTES:
        data = data[:MAX_MARKDOWN_BYTES]
    return data.decode("utf-8", errors="replace")


def skill_body(skill: Skill, language: str | None = None) -> str:
    """What a model follows when it uses the skill: a Markdown skill's content, a
    SKILL.md skill's body (read now), an executable's help text; in `language` when
    the skill says it in that language."""
    if skill.kind != "folder":
        return skill.content_in(language) if language else skill.content
    try:
        return read_frontmatter(_read_text(skill.path / SKILL_FILE))[1]
    except (OSError, ValueError) as exc:
        return f"(SKILL.md cannot be read: {exc})"


def _allowed_tools(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(value.replace(",", " ").split())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError("allowed-tools must be a list of tool names or one string of them")


def _folder_skill(path: Path, source: str, folder: Path) -> Skill:
    name = path.name
    base = Skill(name, "folder", path, source, folder)
    try:
        meta, _body = read_frontmatter(_read_text(path / SKILL_FILE))
        stated, description = meta.get("name"), meta.get("description")
        if not isinstance(stated, str) or not stated.strip():
            raise ValueError("SKILL.md's frontmatter has no 'name'")
        if stated != name:
            raise ValueError(f"SKILL.md names {stated!r} but its folder is {name!r}")
        if not isinstance(description, str) or not description.strip():
            raise ValueError("SKILL.md's frontmatter has no 'description'")
        metadata = meta.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise ValueError("SKILL.md's 'metadata' must be a mapping")
        allowed = _allowed_tools(meta.get("allowed-tools"))
        context = meta.get("context")
        if context not in (None, "fork"):
            raise ValueError("SKILL.md's 'context' may only be 'fork' (a sub-agent)")
    except (OSError, ValueError) as exc:
        return replace(base, error=str(exc))
    return Skill(
        name,
        "folder",
        path,
        source,
        folder,
        summary=" ".join(description.split()),
        content=description.strip(),
        allowed_tools=allowed,
        metadata=metadata,
        forks=context == "fork",
    )


def _help_text(ran: HelpRun) -> str:
    return ran.stdout if ran.stdout.strip() else ran.stderr


def _executable_skill(path: Path, source: str, folder: Path, run_help: HelpRunner) -> Skill:
    """The skill `path` is, read from its `--help` in each language of `LOCALES`;
    whether it works is judged by the first language's answer."""
    name = path.name
    base = Skill(name, "executable", path, source, folder)
    languages = list(LOCALES)
    try:
        ran = run_help(path, folder, LOCALES[languages[0]])
    except Exception as exc:  # the sandbox refused: this skill is broken, not the scan
        return replace(base, error=f"--help could not run: {exc}")
    text = _help_text(ran)
    summary = help_summary(text)
    if len(text) > MAX_HELP_CHARS:  # a flood, whether or not it ever ended
        cut = f"\n…[cut {len(text) - MAX_HELP_CHARS} characters]"
        return replace(
            base,
            summary=summary[:200],
            content=text[:MAX_HELP_CHARS] + cut,
            error=f"--help printed more than {MAX_HELP_CHARS} characters",
        )
    if ran.timed_out:
        return replace(base, error=f"--help did not answer within {ran.timeout:g} s")
    if not text.strip():
        return replace(base, error=f"--help printed nothing (exit code {ran.returncode})")
    contents = {languages[0]: text.strip("\n")}
    for language in languages[1:]:
        contents[language] = _other_language(path, folder, run_help, language)
        contents[language] = contents[language] or contents[languages[0]]
    return Skill(
        name,
        "executable",
        path,
        source,
        folder,
        summary=summary,
        content=contents[languages[0]],
        summaries={lang: help_summary(body) for lang, body in contents.items()},
        contents=contents,
    )


def _other_language(path: Path, folder: Path, run_help: HelpRunner, language: str) -> str:
    """The help text in `language`; empty when that run gave none fit to show."""
    try:
        ran = run_help(path, folder, LOCALES[language])
    except Exception:  # the first language's answer stands
        return ""
    text = _help_text(ran)
    if ran.timed_out or len(text) > MAX_HELP_CHARS:
        return ""
    return text.strip("\n")


def read_entry(path: Path, source: str, folder: Path, run_help: HelpRunner) -> Skill | None:
    """The skill one folder entry is, None when it is none (ignored name, a folder
    without SKILL.md); never raises for a broken skill."""
    entry = path.name
    if ignored_name(entry):
        return None
    try:
        info = path.lstat()
        real = path.resolve()
    except OSError as exc:
        return Skill(
            entry, "markdown", path, source, folder, error=f"cannot be read: {exc}"
        )
    if not is_inside(real, folder.resolve()):
        kind: SkillKind = "markdown" if entry.endswith(".md") else "executable"
        name = entry[:-3] if kind == "markdown" else entry
        return Skill(
            name,
            kind,
            path,
            source,
            folder,
            error="a link to a place outside its skills folder",
        )
    if stat.S_ISLNK(info.st_mode):
        info = real.stat()
    if stat.S_ISDIR(info.st_mode):
        if not (real / SKILL_FILE).is_file():
            return None
        problem = bad_name(entry)
        if problem:
            return Skill(entry, "folder", path, source, folder, error=problem)
        return _folder_skill(path, source, folder)
    if entry.endswith(".md"):
        name = entry[:-3]
        problem = bad_name(name)
        if problem:
            return Skill(name, "markdown", path, source, folder, error=problem)
        try:
            skill = _markdown_skill(name, path, source, folder, _read_text(real))
        except (OSError, ValueError) as exc:
            return Skill(
                name, "markdown", path, source, folder, error=f"cannot be read: {exc}"
            )
        if not skill.summary:
            return Skill(name, "markdown", path, source, folder, error="the file is empty")
        return skill
    if not stat.S_ISREG(info.st_mode):
        return None
    if not info.st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH):
        return Skill(
            entry,
            "executable",
            path,
            source,
            folder,
            error="not executable: a skill that is not .md needs the execute bit (chmod +x)",
        )
    problem = bad_name(entry)
    if problem:
        return Skill(
            entry,
            "executable",
            path,
            source,
            folder,
            error=f"{problem} (install it without its extension)",
        )
    return _executable_skill(real, source, folder, run_help)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """What changes when the entry changes (for a SKILL.md folder: its SKILL.md)."""
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            info = os.stat(path / SKILL_FILE)
        return (info.st_mtime_ns, info.st_size, info.st_mode)
    except OSError:
        return None


class FolderScan:
    """One skills folder, read again on `scan()`; unchanged entries are not re-read."""

    def __init__(self, folder: Path, source: str, run_help: HelpRunner) -> None:
        self.folder = folder
        self.source = source
        self._run_help = run_help
        self._known: dict[str, tuple[tuple[int, int, int] | None, Skill | None]] = {}
        self._lock = threading.Lock()

    def scan(self) -> list[Skill]:
        """Every skill of the folder, by name (a missing folder has none)."""
        with self._lock:
            try:
                entries = sorted(os.listdir(self.folder))
            except OSError:
                self._known.clear()
                return []
            known: dict[str, tuple[tuple[int, int, int] | None, Skill | None]] = {}
            changed: dict[str, tuple[int, int, int] | None] = {}
            for entry in entries:
                if ignored_name(entry):
                    continue
                stamp = _stamp(self.folder / entry)
                earlier = self._known.get(entry)
                if earlier is not None and stamp is not None and earlier[0] == stamp:
                    known[entry] = earlier
                else:
                    changed[entry] = stamp
            for entry, skill in self._read(list(changed)):
                known[entry] = (changed[entry], skill)
            self._known = known
            skills = [skill for _stamp_, skill in known.values() if skill is not None]
        return sorted(skills, key=lambda s: s.name)

    def _read(self, entries: list[str]) -> list[tuple[str, Skill | None]]:
        """Each entry read, its `--help` run beside the others': a folder's read waits
        for its slowest entry, not for the sum of them."""
        if not entries:
            return []

        def read(entry: str) -> tuple[str, Skill | None]:
            return entry, read_entry(
                self.folder / entry, self.source, self.folder, self._run_help
            )

        with ThreadPoolExecutor(min(READERS, len(entries))) as pool:
            return list(pool.map(read, entries))

    def forget(self) -> None:
        """Read every entry again on the next scan (`reload_skills`)."""
        with self._lock:
            self._known.clear()
