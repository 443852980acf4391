"""A manifest may give its name and description in each language:
an old manifest stays valid and reads its one name everywhere; `/api/apps` carries
them for the desktop; the shipped apps give both languages without glosses."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import ValidationError

from aios_protocol.messages import AppInfo, Manifest
from tests.procs import ROOT

GLOSS = re.compile(r"[（(]\s*[A-Za-z][A-Za-z ,;:'’/-]{2,}[)）]")
CJK = re.compile(r"[\u3400-\u9fff]")


def test_an_old_manifest_reads_its_one_name_in_every_language() -> None:
    old = Manifest.model_validate(
        {"name": "笔记", "entry": "main.py", "description": "记笔记"}
    )
    assert old.names == {} and old.descriptions == {}
    assert old.name_in("en-US") == "笔记" and old.description_in("en-US") == "记笔记"


def test_names_and_descriptions_by_language() -> None:
    manifest = Manifest.model_validate(
        {
            "name": "笔记",
            "entry": "main.py",
            "description": "记笔记",
            "names": {"en-US": "Notes"},
            "descriptions": {"en-US": "Takes notes"},
        }
    )
    assert manifest.name_in("en-US") == "Notes" and manifest.name_in("zh-CN") == "笔记"
    assert manifest.description_in("en-US") == "Takes notes"
    info = AppInfo(id="notes", name="笔记", status="idle", names=manifest.names)
    assert info.dump()["names"] == {"en-US": "Notes"}


@pytest.mark.parametrize("names", [{"fr-FR": "Notes"}, {"en-US": ""}])
def test_a_language_outside_the_two_or_an_empty_name_is_refused(names) -> None:
    with pytest.raises(ValidationError):
        Manifest.model_validate({"name": "笔记", "entry": "main.py", "names": names})


SHIPPED = (
    "code_app",
    "hello_app",
    "music_app",
    "scheduler_app",
    "skills_app",
    "system_agent",
)


@pytest.mark.parametrize("app_id", SHIPPED)
def test_the_shipped_apps_give_both_languages_without_glosses(app_id: str) -> None:
    raw = json.loads((ROOT / "apps" / app_id / "manifest.json").read_text("utf-8"))
    manifest = Manifest.model_validate(raw)
    english = (manifest.name_in("en-US"), manifest.description_in("en-US"))
    assert all(english) and not any(CJK.search(text) for text in english), english
    assert not GLOSS.search(manifest.description), manifest.description
