"""The example skills in a user's skills folder (`executor/skills/examples.py`): copied
in at the first start, and at every later start brought up to date where the user
left them as shipped — never over a copy the user changed, never back after the user
deleted one. Real folders; the repository's own history where git has it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from executor.providers.skills import SkillsProvider
from executor.skills import examples as shipped
from executor.skills.examples import RECORD, content_hash, seed_examples
from tests.executor.conftest import Harness
from tests.procs import ROOT
from tests.skills.conftest import listed, wait_for

GREET_V1 = "#!/bin/sh\necho 'greet - say hello'\n"
GREET_V2 = "#!/bin/sh\necho 'greet - say hello in your language'\n"
NOTES_V1 = "# notes\n\nWrite it down.\n"
NOTES_V2 = "# notes\n\nWrite it down, in your language.\n"


def ship(folder: Path, files: dict[str, str]) -> Path:
    """A folder of examples as the repository would ship them."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def record_of(folder: Path) -> dict[str, str]:
    return json.loads((folder / RECORD).read_text("utf-8"))["shipped"]


def test_a_new_folder_gets_every_example_and_a_record_of_them(tmp_path: Path) -> None:
    folder = tmp_path / "skills"
    done = seed_examples(folder, ROOT / "skills")
    assert sorted(done.copied) == ["code_review.md", "temp_convert", "text_stats"]
    assert done.updated == done.kept == []
    assert os.access(folder / "text_stats", os.X_OK)
    assert (folder / "text_stats").read_bytes() == (
        ROOT / "skills" / "text_stats.sh"
    ).read_bytes()
    assert record_of(folder) == {
        "code_review.md": content_hash(ROOT / "skills" / "code_review.md"),
        "temp_convert": content_hash(ROOT / "skills" / "temp_convert.py"),
        "text_stats": content_hash(ROOT / "skills" / "text_stats.sh"),
    }
    assert not seed_examples(folder, ROOT / "skills")  # nothing new: nothing done


def test_a_changed_example_replaces_a_copy_left_as_shipped_only(tmp_path: Path) -> None:
    """v2 of an example replaces the user's copy of v1; a copy the user edited is
    kept, one the user deleted stays away, and an example new in v2 comes in."""
    folder = tmp_path / "skills"
    v1 = ship(tmp_path / "v1", {"greet.sh": GREET_V1, "notes.md": NOTES_V1, "gone.md": "x"})
    assert sorted(seed_examples(folder, v1).copied) == ["gone.md", "greet", "notes.md"]
    (folder / "notes.md").write_text("# notes\n\nMy own words.\n", encoding="utf-8")
    (folder / "gone.md").unlink()
    v2 = ship(
        tmp_path / "v2",
        {"greet.sh": GREET_V2, "notes.md": NOTES_V2, "gone.md": "y", "new.md": "# new\n"},
    )
    done = seed_examples(folder, v2)
    assert (done.copied, done.updated, done.kept) == (["new.md"], ["greet"], ["notes.md"])
    assert (folder / "greet").read_text("utf-8") == GREET_V2
    assert os.access(folder / "greet", os.X_OK)
    assert (folder / "notes.md").read_text("utf-8") == "# notes\n\nMy own words.\n"
    assert not (folder / "gone.md").exists()
    assert not (folder / ".installing").exists()  # nothing staged is left
    # the edited copy was offered v2 once: said once, not at every start
    assert not seed_examples(folder, v2)
    assert record_of(folder)["notes.md"] == content_hash(v2 / "notes.md")


def test_a_folder_from_before_the_record_is_judged_by_the_earlier_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy that is one of the versions shipped before is brought up to date; any
    other is the user's; an example shipped before and missing was deleted."""
    v1 = ship(tmp_path / "v1", {"greet.sh": GREET_V1, "notes.md": NOTES_V1})
    monkeypatch.setattr(
        shipped,
        "EARLIER_VERSIONS",
        {
            "greet": frozenset({content_hash(v1 / "greet.sh")}),
            "notes.md": frozenset({content_hash(v1 / "notes.md")}),
            "gone.md": frozenset({"0" * 64}),
        },
    )
    folder = ship(tmp_path / "skills", {"greet": GREET_V1, "notes.md": "# mine\n"})
    v2 = ship(
        tmp_path / "v2",
        {"greet.sh": GREET_V2, "notes.md": NOTES_V2, "gone.md": "y", "new.md": "# new\n"},
    )
    done = seed_examples(folder, v2)
    assert (done.copied, done.updated, done.kept) == (["new.md"], ["greet"], ["notes.md"])
    assert (folder / "greet").read_text("utf-8") == GREET_V2
    assert (folder / "notes.md").read_text("utf-8") == "# mine\n"
    assert not (folder / "gone.md").exists()
    assert set(record_of(folder)) == {"greet", "notes.md", "gone.md", "new.md"}


def test_a_damaged_record_is_set_aside_and_judged_as_from_before(tmp_path: Path) -> None:
    folder = tmp_path / "skills"
    seed_examples(folder, ROOT / "skills")
    (folder / RECORD).write_text("{not json", encoding="utf-8")
    assert not seed_examples(folder, ROOT / "skills")  # the copies are current
    assert record_of(folder)["text_stats"] == content_hash(
        ROOT / "skills" / "text_stats.sh"
    )


def _history(path: str) -> list[bytes]:
    """Every version of `path` in the repository's history, newest first; [] when
    git or the history is not there."""
    try:
        commits = subprocess.run(
            ["git", "-C", str(ROOT), "log", "--format=%H", "--", path],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        return [
            subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{commit}:{path}"],
                capture_output=True,
                check=True,
            ).stdout
            for commit in commits
        ]
    except (OSError, subprocess.CalledProcessError):
        return []


INSTALLED = {
    "code_review.md": "code_review.md",
    "temp_convert.py": "temp_convert",
    "text_stats.sh": "text_stats",
}


def test_the_earlier_versions_are_the_examples_shipped_before(tmp_path: Path) -> None:
    """Each version of an example in the history before the one in the tree is in
    `EARLIER_VERSIONS` (add its hash there when changing an example); a state folder
    holding the first versions, from before the record, gets the current ones."""
    histories = {name: _history(f"skills/{name}") for name in INSTALLED}
    if not all(histories.values()):
        pytest.skip("no git history of skills/ here")
    folder = tmp_path / "skills"
    folder.mkdir()
    for name, versions in histories.items():
        current = (ROOT / "skills" / name).read_bytes()
        earlier = [v for v in versions if v != current]
        known = shipped.EARLIER_VERSIONS[INSTALLED[name]]
        assert {content_hash_of(v) for v in earlier} <= known, name
        assert content_hash_of(current) not in known, name
        (folder / INSTALLED[name]).write_bytes(versions[-1])  # as first shipped
    done = seed_examples(folder, ROOT / "skills")
    assert sorted(done.updated) == sorted(INSTALLED.values())
    for name, installed in INSTALLED.items():
        assert (folder / installed).read_bytes() == (ROOT / "skills" / name).read_bytes()


def content_hash_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_provider_says_in_the_log_what_it_updated_and_what_it_kept(
    skills_harness: Harness,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """At a later start an unchanged copy is replaced and the edited one kept, each
    named in the log; the skills listed are the new ones."""
    toolbox = skills_harness.app.extensions["aios_toolbox"]
    folder = tmp_path / "state" / "skills"
    first = SkillsProvider(
        toolbox, folder, examples=ship(tmp_path / "v1", {"greet.sh": GREET_V1}), watch=False
    )
    first.start()
    wait_for(lambda: first.status()["state"] == "running")
    first.stop()
    (folder / "notes.md").write_text(NOTES_V1, encoding="utf-8")  # the user's own
    v2 = ship(tmp_path / "v2", {"greet.sh": GREET_V2, "notes.md": NOTES_V2})
    with caplog.at_level(logging.INFO, logger="aios.executor.skills"):
        again = SkillsProvider(toolbox, folder, examples=v2, watch=False)
        again.start()
        wait_for(lambda: again.status()["state"] == "running")
    try:
        said = caplog.text
        assert "example skills brought up to date" in said and "greet" in said
        assert "kept as the user changed them" in said and "notes.md" in said
        assert (folder / "notes.md").read_text("utf-8") == NOTES_V1
        assert "say hello in your language" in listed(again)["greet"]["summary"]
    finally:
        again.stop()
