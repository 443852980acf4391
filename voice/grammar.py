"""The offline recogniser's command grammar, built from the installed apps.

pocketsphinx listens for the phrases of one JSGF grammar, made of the English parts
of each app's manifest: every English example as a whole phrase, every English
keyword alone, and "<verb> [the|some|my|a] <keyword> [player|app|window|files]"
("open the music player", "run the code"). Words the pronunciation dictionary does
not know are left out with their phrase. Chinese keywords and examples are skipped:
no offline Chinese model exists here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from controller.routing.router import AppProfile

__all__ = [
    "CommandGrammar",
    "build_command_grammar",
    "english_phrase",
    "profiles_from_manifests",
]

# Generic command words of a desktop; apps' own keywords supply the objects.
GENERIC_VERBS = ("open", "close", "start", "show", "run", "play", "stop", "pause")
DETERMINERS = ("the", "some", "my", "a")
TARGET_NOUNS = ("player", "app", "window", "files")

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_SPOKEN_CHARS = re.compile(r"[A-Za-z' ,.!?;:()\-]+")


def english_phrase(text: str) -> str | None:
    """`text` as lowercase space-separated words, or None if it is not plain English.

    Anything with non-ASCII characters (Chinese), digits or symbols that are not read
    aloud the same way by everyone ("hello.py", "2**10") is not a phrase one can say.
    """
    stripped = text.strip()
    if not stripped or not _SPOKEN_CHARS.fullmatch(stripped):
        return None
    words = _WORD.findall(stripped.lower())
    return " ".join(words) if words else None


@dataclass(frozen=True)
class CommandGrammar:
    """A JSGF grammar and the phrases it was built from."""

    jsgf: str
    examples: tuple[str, ...]
    keywords: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not self.examples and not self.keywords


def _known_phrases(texts: Iterable[str], known_word: Callable[[str], bool]) -> list[str]:
    phrases: list[str] = []
    for text in texts:
        phrase = english_phrase(text)
        if phrase and phrase not in phrases and all(known_word(w) for w in phrase.split()):
            phrases.append(phrase)
    return phrases


def _alternatives(items: Sequence[str]) -> str:
    return " | ".join(items)


def build_command_grammar(
    profiles: Sequence[AppProfile], known_word: Callable[[str], bool]
) -> CommandGrammar:
    """The grammar for the apps in `profiles`; `known_word` says if a word can be said.

    (`known_word` is the decoder's dictionary lookup; tests may pass `lambda w: True`.)
    """
    examples = _known_phrases((e for p in profiles for e in p.examples), known_word)
    keywords = sorted(
        set(_known_phrases((k for p in profiles for k in p.keywords), known_word))
    )
    if not examples and not keywords:
        return CommandGrammar("", (), ())
    verbs = [w for w in GENERIC_VERBS if known_word(w)]
    determiners = [w for w in DETERMINERS if known_word(w)]
    nouns = [w for w in TARGET_NOUNS if known_word(w)]
    rules = ["#JSGF V1.0;", "grammar commands;"]
    choices = []
    if examples:
        choices.append("<example>")
        rules.append(f"<example> = {_alternatives(examples)};")
    if keywords:
        choices.append("<keyword>")
        rules.append(f"<keyword> = {_alternatives(keywords)};")
        if verbs:
            choices.append("<app_command>")
            command = f"({_alternatives(verbs)})"
            if determiners:
                command += f" [{_alternatives(determiners)}]"
            command += " <keyword>"
            if nouns:
                command += f" [{_alternatives(nouns)}]"
            rules.append(f"<app_command> = {command};")
    rules.insert(2, f"public <command> = {_alternatives(choices)};")
    return CommandGrammar("\n".join(rules) + "\n", tuple(examples), tuple(keywords))


def profiles_from_manifests(apps_dir: str | Path) -> list[AppProfile]:
    """Profiles from `apps_dir/*/manifest.json` (for tests and the CLI's offline path).

    The running controller passes its own registry's profiles instead. A manifest
    that cannot be read is skipped: the grammar is a convenience, not a gatekeeper.
    """
    profiles: list[AppProfile] = []
    for path in sorted(Path(apps_dir).glob("*/manifest.json")):
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(raw, dict):
            continue
        profiles.append(
            AppProfile(
                app_id=path.parent.name,
                name=str(raw.get("name", path.parent.name)),
                description=str(raw.get("description", "")),
                keywords=tuple(str(k) for k in raw.get("keywords", []) or []),
                examples=tuple(str(e) for e in raw.get("examples", []) or []),
            )
        )
    return profiles
