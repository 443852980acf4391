"""A skill's `--help` read as form fields, and the form's values back into an argv.

argparse's help format is the contract (the skill template prints it; its shell
template imitates it): an option line is indented, starts with `-x` or `--name`,
may name a metavar (`-v VALUE, --value VALUE`, `--to {f,c}`) and is followed,
after two or more spaces or on the next deeper-indented lines, by its help. Under a
`positional arguments:` heading the first word is an argument's name. Options are
read wherever such a line stands (the template's epilog repeats them: the first
reading of an option wins). What becomes of an option: a flag without metavar is a
checkbox; `{a,b}` choices a select; a default stated in the help — `(默认 10)`,
`(default: 10)` — the field's value (a number makes it a number field); an option
outside every `[...]` of an argparse `usage:` line is required. `-h` / `--help` is
never a field. A field's label is what its help says, in plain words (the flags are
for the command line, not for a person: `to_field(turn)`); without help, its name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from aios_sdk import Turn

__all__ = ["HelpField", "as_number", "build_argv", "form_fields", "parse_help"]

# the option part ends where two spaces (or the line) end it
_OPTION_LINE = re.compile(
    r"^(?P<indent> {1,8})(?P<spec>-{1,2}[A-Za-z0-9](?:[^ ]| (?! ))*)(?:\s{2,}(?P<help>\S.*))?$"
)
_FLAG = re.compile(r"^(-{1,2}[A-Za-z0-9][\w-]*)(?:[ =](\S+))?$")
_POSITIONAL = re.compile(r"^ {1,8}(?P<name>[A-Za-z_][\w-]*)(?:\s{2,}(?P<help>\S.*))?$")
_DEFAULT = re.compile(
    r"[(（]\s*(?:默认|default)\s*[:：=]?\s*([^)）]+?)\s*[)）]", re.IGNORECASE
)
_CHOICES = re.compile(r"^\{([^}]*)\}$")
_HEADING = re.compile(r"^\S.*[:：]\s*$")
_HELP_FLAGS = frozenset({"-h", "--help"})


@dataclass
class HelpField:
    """One option or positional argument of a skill."""

    name: str  # the form field's name (argparse's dest: `--max-count` → `max_count`)
    flag: str | None  # what goes into the argv (`--value`), None for a positional
    shown: str  # how the help names it: "-v / --value", or the positional's name
    help: str = ""
    takes_value: bool = True
    metavar: str | None = None  # what the help calls its value (`TEXT`, `N`)
    choices: list[str] = field(default_factory=list)
    default: str | None = None
    required: bool = False

    def label(self, turn: Turn) -> str:
        """What the field is, in words: its help ("温度数值", "The temperature"), or
        its name ("value") when the skill gives none."""
        said = self.help or self.name.replace("_", " ")
        return said[:1].upper() + said[1:]

    def to_field(self, turn: Turn) -> dict[str, Any]:
        """The desktop's form field (`{name, label, type, value?, options?, required?}`)."""
        found: dict[str, Any] = {"name": self.name, "label": self.label(turn)}
        if not self.takes_value:
            found.update(type="checkbox", value=False)
        elif self.choices:
            found.update(type="select", options=list(self.choices))
            found["value"] = (
                self.default if self.default in self.choices else self.choices[0]
            )
        elif self.default is not None and as_number(self.default) is not None:
            found.update(type="number", value=as_number(self.default))
        else:
            found["type"] = "text"
            if self.default is not None:
                found["value"] = self.default
        if self.required:
            found["required"] = True
        return found


def as_number(text: str) -> float | int | None:
    """`text` as a number (`"10"` → 10, `"0.5"` → 0.5), None when it is none."""
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() and "." not in text else value


def _dest(flags: list[str]) -> str:
    longest = max(flags, key=lambda f: (f.startswith("--"), len(f)))
    return longest.lstrip("-").replace("-", "_")


def _required_flags(text: str) -> set[str]:
    """The options an argparse `usage:` line shows outside brackets."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    if start is None or not lines[start].lstrip().lower().startswith("usage:"):
        return set()
    usage = []
    for line in lines[start:]:
        if not line.strip():
            break
        usage.append(line.strip())
    flat = " ".join(usage)[len("usage:") :]
    depth, outside = 0, []
    for char in flat:
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(0, depth - 1)
        elif depth == 0:
            outside.append(char)
    return {token for token in "".join(outside).split() if token.startswith("-")}


def _option(spec: str, help_text: str) -> HelpField | None:
    flags, metavar = [], None
    for part in (p.strip() for p in re.split(r",\s+", spec)):
        match = _FLAG.match(part)
        if match is None:
            return None
        flags.append(match.group(1))
        metavar = metavar or match.group(2)
    if not flags or set(flags) & _HELP_FLAGS:
        return None
    flag = max(flags, key=lambda f: (f.startswith("--"), len(f)))
    choices: list[str] = []
    if metavar and (found := _CHOICES.match(metavar)):
        choices = [c.strip() for c in found.group(1).split(",") if c.strip()]
    default = _DEFAULT.search(help_text)
    return HelpField(
        name=_dest(flags),
        flag=flag,
        shown=" / ".join(flags),
        help=help_text,
        takes_value=metavar is not None,
        metavar=metavar,
        choices=choices,
        default=default.group(1).strip() if default else None,
    )


def parse_help(text: str) -> list[HelpField]:
    """The options and positional arguments `text` (a `--help` output) describes."""
    required = _required_flags(text)
    found: dict[str, HelpField] = {}
    current: HelpField | None = None
    positional_section = False
    for line in text.splitlines():
        if not line.strip():
            current = None
            continue
        if _HEADING.match(line):
            positional_section = line.strip().lower().startswith("positional arguments")
            current = None
            continue
        option = _OPTION_LINE.match(line)
        if option is not None:
            parsed = _option(
                option.group("spec").strip(), (option.group("help") or "").strip()
            )
            current = None
            if parsed is not None and parsed.name not in found:
                parsed.required = bool({parsed.flag} & required) or any(
                    f in required for f in parsed.shown.split(" / ")
                )
                found[parsed.name] = current = parsed
            continue
        if positional_section and (positional := _POSITIONAL.match(line)):
            name = positional.group("name")
            if name not in found:
                help_text = (positional.group("help") or "").strip()
                current = HelpField(name, None, name, help_text, required=True)
                found[name] = current
            continue
        if current is not None and line.startswith(" " * 10):  # the help goes on
            extra = line.strip()
            current.help = f"{current.help} {extra}".strip()
            if current.default is None and (default := _DEFAULT.search(current.help)):
                current.default = default.group(1).strip()
    return list(found.values())


def form_fields(text: str, turn: Turn) -> list[dict[str, Any]]:
    """`parse_help(text)` as the desktop's form fields, labelled for `turn`'s user."""
    return [f.to_field(turn) for f in parse_help(text)]


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def build_argv(name: str, fields: list[HelpField], values: dict[str, Any]) -> list[str]:
    """`[name, …]`: each option given a value (a checked flag alone), then the
    positional arguments in their order; empty values are left out."""
    options: list[str] = []
    positionals: list[str] = []
    for item in fields:
        value = values.get(item.name)
        if value is None or value == "" or value is False:
            continue
        if item.flag is None:
            positionals.append(_text(value))
        elif not item.takes_value:
            if value is True or str(value).lower() in ("1", "true", "on", "yes"):
                options.append(item.flag)
        else:
            options += [item.flag, _text(value)]
    return [name, *options, *positionals]
