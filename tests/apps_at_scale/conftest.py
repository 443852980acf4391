"""Fixtures of the apps-at-scale tests: a real system whose apps start on first use.

`lazy_config(**apps)` is the controller tests' fast-supervision config with the
default lazy start (`apps.start_at_launch` off) and the given `apps` settings;
`echo_copy(apps_dir, app_id)` puts a renamed copy of the test echo app in a folder
(outside the apps folder first when a test copies it in itself).
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

from tests.controller.system import TEST_APPS, TEST_CONFIG

_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


def lazy_config(**apps: Any) -> dict[str, Any]:
    config = copy.deepcopy(TEST_CONFIG)
    config["apps"] = {"start_at_launch": False, **apps}
    config["permissions"] = {"confirm": False}
    return config


def echo_copy(folder: Path, app_id: str, **manifest: Any) -> Path:
    """A copy of the echo app at `folder/app_id`, its manifest updated by `manifest`."""
    target = folder / app_id
    shutil.copytree(TEST_APPS / "echo_app", target, ignore=_IGNORE)
    path = target / "manifest.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw.update(manifest)
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    return target
