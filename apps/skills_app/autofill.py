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
- a *text* option (its name or help says 文字, 文本, text, words…, and not a file)
  takes the text the instruction gives after a colon or between quotes ("统计一下
  文字：今天天气很好" → `今天天气很好`) — when the skill has exactly one such
  option; the numbers and names inside that text are the text's, not the form's;
- a flag (`--twice`) stays off, unless the instruction says its name: then the user
  decides; another option that takes a value (a file) stays empty.

The form is run at once (`Filling.complete`) only when every required option has a
value, nothing was left for the user, and every number said went into an option
(a number the skill has no option for is `unused`: running without it would not be
what was asked).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .helpform import HelpField, as_number, parse_help

__all__ = ["Filling", "choice_names", "fill_from_words", "numbers_said", "text_said"]

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

    @property
    def complete(self) -> bool:
        """Whether the skill can run with `values` as they are."""
        return not self.left and not self.unused


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


def text_said(said: str) -> tuple[str, str] | None:
    """(the text `said` gives, the rest of `said`): the one text between quotes, else
    what follows the first colon; None when it gives none."""
    quoted = list(_QUOTED.finditer(said))
    if len(quoted) == 1:
        found = quoted[0]
        text = next(part for part in found.groups() if part is not None)
        return text, said[: found.start()] + said[found.end() :]
    if quoted:
        return None  # several texts: which one is not clear
    after = _AFTER_COLON.search(said)
    if after is None:
        return None
    return after.group("text"), said[: after.start()]


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


def fill_from_words(help_text: str, said: str) -> Filling:
    """The form of the skill whose `--help` is `help_text`, filled from `said`."""
    fields = parse_help(help_text)
    texts = [item for item in fields if _is_text(item)]
    given = text_said(said) if len(texts) == 1 else None
    filling = Filling()
    if given is not None:  # the text is the text option's, the rest is the request
        filling.values[texts[0].name], said = given
    numbers = numbers_said(said)
    numeric = [item for item in fields if _is_numeric(item) and not _is_text(item)]
    filling.unused = [] if numeric else numbers
    for item in fields:
        if item.name in filling.values:
            continue
        if item in numeric:
            if len(numeric) == 1 and len(numbers) == 1:
                filling.values[item.name] = numbers[0]
            elif numbers:
                filling.left.append(item)  # which number goes where is not clear
                continue
            elif (default := as_number(item.default or "")) is not None:
                filling.values[item.name] = default
        elif item.choices:
            chosen = _choose(item, help_text, said)
            if chosen is None:
                filling.left.append(item)
                continue
            if chosen or item.default in item.choices:
                filling.values[item.name] = chosen or item.default
        elif not item.takes_value:
            if _said_by_name(item, said):
                filling.left.append(item)  # said, but on or off? the user decides
            continue
        if item.required and item.name not in filling.values:
            filling.left.append(item)
    return filling
