"""A skill's form filled from the words of an instruction, offline, only where it is clear.

The rule, option by option of the skill's `--help` (`helpform.parse_help`):

- a *numeric* option (its default is a number, or its name, metavar or help says it
  is one: 数值, 数量, number, count, …) takes the number the instruction says
  — when the skill has exactly one numeric option and the instruction exactly one
  number (`零下`/`负`/`-` make it negative). No number leaves the option's default;
  several numbers, or several numeric options, leave it for the user;
- a *choice* option (`--to {f,c}`) takes the choice the instruction names. A choice
  is named by its own word (two letters or more: `csv`) or by the words its skill's
  help gives it right after it (`f 转成华氏/Fahrenheit`). An option about a
  target (`--to`, `--target`, `--into`, or 目标/target in its help) takes the choice
  named after 成/为/到/多少/to/into/in/as, so "把30摄氏度换算成华氏度" is `f`. Named
  nowhere, it keeps its default; named ambiguously, it is the user's to choose;
- a *file* option (its help says 文件, 路径, file, path, or its name or metavar
  does) takes the file the instruction names — when the skill has exactly one such
  option and the instruction one name: a word with an extension ("统计一下
  notes.txt的行数" → `notes.txt`), a name between quotes that has one, or the whole
  text after a colon when it is a file of the workspace. A name the workspace does
  not hold (when the app knows it) is `missing`: the skill does not run, and the
  user is told which file was not found;
- a *text* option (its name or help says 文字, 文本, text, words…, and not a file)
  takes the text the instruction gives after a colon or between quotes ("统计一下
  文字：今天天气很好" → `今天天气很好`) — when the skill has exactly one such
  option and that text names no file; the numbers and names inside that text are
  the text's, not the form's;
- a flag (`--twice`) stays off, unless the instruction says its name: then the user
  decides; another option that takes a value stays empty.

The form is run at once (`Filling.complete`) only when every required option has a
value, nothing was left for the user, every number said went into an option (a
number the skill has no option for is `unused`: running without it would not be
what was asked) and every file named is there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .helpform import HelpField, as_number, parse_help

__all__ = [
    "Filling",
    "choice_names",
    "file_said",
    "fill_from_words",
    "numbers_said",
    "text_said",
]

_NUMBER = re.compile(
    r"(?P<sign>零下|负|(?<![A-Za-z0-9_])[-−])?(?<![A-Za-z0-9_.])(?<![A-Za-z0-9_]-)"
    r"(?P<digits>\d+(?:\.\d+)?)(?![\d.]*\d)"
)
_NUMERIC_WORDS = re.compile(
    r"数值|数字|数量|次数|个数|number|numeric|count|amount|quantity|\bnum\b",
    re.I,
)
_TEXT_NAME = re.compile(r"^(text|string|sentence|words|content|message|msg)$", re.I)
_TEXT_WORDS = re.compile(r"文字|文本|句子|\btext\b|\bsentences?\b|\bstring\b", re.I)
_FILE_WORDS = re.compile(r"文件|路径|\bfiles?\b|\bpath\b", re.I)
_FILE_NAME = re.compile(r"^(files?|filename|path|input|infile)$", re.I)
# a file's name said in a request: a word of Latin letters, digits, `_-./` with an
# extension that starts with a letter (`notes.txt`, `data/2024.csv`; not `3.5`)
_NAMED_FILE = re.compile(
    r"(?<![A-Za-z0-9_./-])(?P<name>[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.[A-Za-z][A-Za-z0-9]*)"
    r"(?![A-Za-z0-9_/-])"
)
# a name between quotes or after a colon that looks like a file's: one with an
# extension of two letters or more, and no line break
_LOOKS_LIKE_FILE = re.compile(r"^[^\n\\:*?<>|]*[^\s.]\.[A-Za-z][A-Za-z0-9]{1,9}$")
# a text given in quotes, or after the first colon
_QUOTED = re.compile(
    r"「(?P<a>[^」]+)」|“(?P<b>[^”]+)”|\"(?P<c>[^\"]+)\"|『(?P<d>[^』]+)』"
)
_AFTER_COLON = re.compile(r"[:：]\s*(?P<text>\S.*?)\s*$", re.S)
_TARGET_OPTION = re.compile(r"^(to|target|into)$")
_TARGET_HELP = re.compile(r"目标|target", re.I)
# what may stand right before the name of the choice a target option takes
_TARGET_BEFORE = re.compile(
    r"(成|为|到|至|多少|几|\bto|\binto|\bin|\bas|how many)\s*$", re.I
)
# after a choice in the help: `f 转成华氏度`, `f: Fahrenheit`, `f = 华氏/Fahrenheit`
_LINKING = re.compile(
    r"^\s*(?:[:：=]|->|→)?\s*(?:转换成|换算成|转换为|转成|转为|表示|代表|即|为|是|means|for)?\s*",
    re.I,
)
_NAME_CHUNK = re.compile(r"[^\s,，;；、()（）#\[\]{}]+")
_CJK_NAME = re.compile(r"[\u4e00-\u9fff]{2,}")
_LATIN_NAME = re.compile(r"[A-Za-z]{3,}")
_NOT_NAMES = frozenset({"默认", "default", "and", "the", "with", "into", "from"})


@dataclass
class Filling:
    """What the instruction fills in: `values` by field name, and the fields the
    user still has to fill (`left`), in the help's order."""

    values: dict[str, Any] = field(default_factory=dict)
    left: list[HelpField] = field(default_factory=list)
    unused: list[int | float] = field(default_factory=list)  # numbers no option took
    missing: list[str] = field(default_factory=list)  # files named, not in the workspace

    @property
    def complete(self) -> bool:
        """Whether the skill can run with `values` as they are."""
        return not self.left and not self.unused and not self.missing


def numbers_said(said: str) -> list[int | float]:
    """The numbers written in `said` (digits; `mp3`, `v2`, `x86_64` are no numbers)."""
    found: list[int | float] = []
    for match in _NUMBER.finditer(said):
        digits = match.group("digits")
        value: int | float = float(digits) if "." in digits else int(digits)
        found.append(-value if match.group("sign") else value)
    return found


def _is_numeric(item: HelpField) -> bool:
    if not item.takes_value or item.choices or _FILE_WORDS.search(item.help):
        return False
    if item.default is not None and as_number(item.default) is not None:
        return True
    return bool(_NUMERIC_WORDS.search(f"{item.name} {item.shown} {item.help}"))


def _is_text(item: HelpField) -> bool:
    """Whether `item` takes a text: its name or metavar says so (`--text TEXT`), or its
    help does without speaking of a number; never a file's name."""
    if not item.takes_value or item.choices or _FILE_WORDS.search(item.help):
        return False
    if item.default is not None and as_number(item.default) is not None:
        return False
    if any(_TEXT_NAME.match(word or "") for word in (item.name, item.metavar)):
        return True
    return bool(_TEXT_WORDS.search(item.help)) and not _NUMERIC_WORDS.search(item.help)


def _is_file(item: HelpField) -> bool:
    """Whether `item` takes a file's name: its help, name or metavar says so."""
    if not item.takes_value or item.choices:
        return False
    named = any(_FILE_NAME.match(word or "") for word in (item.name, item.metavar))
    return named or bool(_FILE_WORDS.search(item.help))


def file_said(
    said: str, is_file: Callable[[str], bool] | None = None
) -> tuple[list[str], str]:
    """(the files `said` names among its words, the rest of `said`): each word with
    an extension that `is_file` says is a file of the workspace, or, without
    `is_file`, each with an extension of two letters or more (`e.g` names none)."""
    names: list[str] = []
    rest = said
    for match in reversed(list(_NAMED_FILE.finditer(said))):
        name = match.group("name")
        if is_file(name) if is_file is not None else _LOOKS_LIKE_FILE.match(name):
            names.insert(0, name)
            rest = rest[: match.start()] + " " + rest[match.end() :]
    return names, rest


def _given(said: str) -> tuple[str, str, bool] | None:
    """(the text `said` gives, the rest of `said`, whether it was quoted): the one
    text between quotes, else what follows the first colon; None when it gives none."""
    quoted = list(_QUOTED.finditer(said))
    if len(quoted) == 1:
        found = quoted[0]
        text = next(part for part in found.groups() if part is not None)
        return text, said[: found.start()] + said[found.end() :], True
    if quoted:
        return None  # several texts: which one is not clear
    after = _AFTER_COLON.search(said)
    if after is None:
        return None
    return after.group("text"), said[: after.start()], False


def text_said(said: str) -> tuple[str, str] | None:
    """(the text `said` gives, the rest of `said`): the one text between quotes, else
    what follows the first colon; None when it gives none."""
    given = _given(said)
    return None if given is None else given[:2]


def _bounded(word: str) -> re.Pattern[str]:
    """`word` standing alone (no Latin letter, digit, `_` or `-` touching it)."""
    return re.compile(rf"(?<![A-Za-z0-9_-]){re.escape(word)}(?![A-Za-z0-9_-])", re.I)


def choice_names(help_text: str, choice: str) -> list[str]:
    """The words that name `choice`: itself (two letters or more), and the names
    the help gives it right after it (`f 转成华氏/Fahrenheit` → 华氏, Fahrenheit)."""
    names = [choice] if len(choice) >= 2 else []
    for match in _bounded(choice).finditer(help_text):
        rest = help_text[match.end() :].split("\n", 1)[0]
        rest = _LINKING.sub("", rest, count=1)
        chunk = _NAME_CHUNK.match(rest)
        if chunk is None:
            continue
        for part in chunk.group(0).split("/"):
            for name in _CJK_NAME.findall(part) + _LATIN_NAME.findall(part):
                if name.lower() not in _NOT_NAMES and name not in names:
                    names.append(name)
    return names


def _where_named(said: str, names: list[str]) -> list[int]:
    """Where in `said` any of `names` stands (a CJK name anywhere, a Latin one alone)."""
    found = []
    for name in names:
        if _CJK_NAME.fullmatch(name):
            found += [m.start() for m in re.finditer(re.escape(name), said)]
        else:
            found += [m.start() for m in _bounded(name).finditer(said)]
    return found


def _choose(item: HelpField, help_text: str, said: str) -> str | None:
    """The choice `said` names for `item`; "" when it names none; None when unclear."""
    named: dict[str, list[int]] = {}
    for choice in item.choices:
        places = _where_named(said, choice_names(help_text, choice))
        if places:
            named[choice] = places
    if not named:
        return ""
    if _TARGET_OPTION.match(item.name) or _TARGET_HELP.search(item.help):
        targets = [
            choice
            for choice, places in named.items()
            if any(_TARGET_BEFORE.search(said[:place]) for place in places)
        ]
        return targets[0] if len(targets) == 1 else None
    return next(iter(named)) if len(named) == 1 else None


def _said_by_name(item: HelpField, said: str) -> bool:
    """Whether `said` names the flag `item` (`--twice` by "twice", three letters or more)."""
    names = {f.lstrip("-") for f in item.shown.split(" / ")} | {item.name.replace("_", " ")}
    return any(len(name) >= 3 and _bounded(name).search(said) for name in names)


def fill_from_words(
    help_text: str, said: str, is_file: Callable[[str], bool] | None = None
) -> Filling:
    """The form of the skill whose `--help` is `help_text`, filled from `said`;
    `is_file(name)`: whether the workspace holds that file (None: not known)."""
    fields = parse_help(help_text)
    files = [item for item in fields if _is_file(item)]
    filling = Filling()
    said = _take_given(filling, fields, said, is_file)
    if len(files) == 1 and files[0].name not in filling.values:
        said = _file_named(filling, files[0], said, is_file)
    numbers = numbers_said(said)
    numeric = [item for item in fields if _is_numeric(item) and not _is_text(item)]
    filling.unused = [] if numeric else numbers
    for item in fields:
        if item.name not in filling.values:
            _fill_field(filling, item, numeric, numbers, help_text, said)
    return filling


def _take_given(
    filling: Filling,
    fields: list[HelpField],
    said: str,
    is_file: Callable[[str], bool] | None,
) -> str:
    """Give the words quoted or after a colon to the one file option (when they name a
    file) or else to the one text option; the rest of `said`."""
    given = _given(said)
    texts = [item for item in fields if _is_text(item)]
    files = [item for item in fields if _is_file(item)]
    if given is not None and len(files) == 1:  # a file's name, quoted or after a colon
        name, rest, quoted = given[0].strip(), given[1], given[2]
        there = is_file is not None and is_file(name)
        if there or (quoted and _LOOKS_LIKE_FILE.match(name)):
            filling.values[files[0].name] = name
            if not there and is_file is not None:
                filling.missing.append(name)
            return rest
    if given is not None and len(texts) == 1:  # the text option's; the rest is asked
        filling.values[texts[0].name] = given[0]
        return given[1]
    return said


def _fill_field(
    filling: Filling,
    item: HelpField,
    numeric: list[HelpField],
    numbers: list[int | float],
    help_text: str,
    said: str,
) -> None:
    """Fill one field the request gave no words of its own: the one number said, a
    choice named, a default; left to the user where the words do not settle it."""
    if item in numeric:
        if len(numeric) == 1 and len(numbers) == 1:
            filling.values[item.name] = numbers[0]
        elif numbers:
            filling.left.append(item)  # which number goes where is not clear
            return
        elif (default := as_number(item.default or "")) is not None:
            filling.values[item.name] = default
    elif item.choices:
        chosen = _choose(item, help_text, said)
        if chosen is None:
            filling.left.append(item)
            return
        if chosen or item.default in item.choices:
            filling.values[item.name] = chosen or item.default
    elif not item.takes_value:
        if _said_by_name(item, said):
            filling.left.append(item)  # said, but on or off? the user decides
        return
    if item.required and item.name not in filling.values:
        filling.left.append(item)


def _file_named(
    filling: Filling, item: HelpField, said: str, is_file: Callable[[str], bool] | None
) -> str:
    """Give `item` the one file `said` names among its words (one the workspace does
    not hold goes to `filling.missing`); several leave it to the user. The rest of
    `said`: the request without the names."""
    there, rest = file_said(said, is_file)
    named, without = file_said(said)  # every word that looks like a file's name
    if len(there) == 1 and len(named) <= 1:
        filling.values[item.name] = there[0]
        return rest
    if not there and len(named) == 1:
        filling.values[item.name] = named[0]
        if is_file is not None:  # not in the workspace
            filling.missing.append(named[0])
        return without
    if there or named:
        filling.left.append(item)  # which file is meant is not clear
    return without
