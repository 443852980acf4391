"""`aios new-app NAME`: create a new app folder from `aios_sdk/template/`.

The folder is an app package in the shape of the shipped apps: `manifest.json`
(with `keywords` / `examples` placeholders for the router), `__init__.py` exporting
the agent, `agent.py` (the `AIOSAgent` and its four attributes), `flows.py` (a first
view, an action and a step plan), `main.py` (the entry, `serve_package(__file__)`),
`role.md`, `requirements.txt`, `tests/test_app.py` (the app tested in-process with
`aios_sdk.testing`) and an empty `workspace/`. An existing folder is never touched.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from string import Template

from aios_protocol.errors import InvalidRequest
from aios_runtime import shipped
from controller.apps.installer import AppExists

__all__ = ["APP_ID", "AppExists", "scaffold_app"]

APP_ID = re.compile(r"[a-z][a-z0-9_]{1,40}")
TEMPLATE_DIR = shipped.APP_TEMPLATE


def _class_name(app_id: str) -> str:
    words = [word for word in app_id.split("_") if word]
    name = "".join(word[:1].upper() + word[1:] for word in words)
    return name if name.endswith("Agent") else f"{name}Agent"


def _flows_name(class_name: str) -> str:
    return f"{class_name.removesuffix('Agent') or class_name}Flows"


def _default_name(app_id: str) -> str:
    return " ".join(word.capitalize() for word in app_id.split("_") if word)


def scaffold_app(apps_dir: str | Path, app_id: str, name: str | None = None) -> Path:
    """Create `apps_dir/app_id/` from the template and return its path.

    `app_id` must match `[a-z][a-z0-9_]{1,40}` and not be an importable module's
    name (the folder becomes a package of that name); `name` (the display name, default
    from the id) must be one line of at most 100 characters. Raises `InvalidRequest`
    for a bad id or name and `AppExists` when the folder is already there.
    """
    if not isinstance(app_id, str) or not APP_ID.fullmatch(app_id):
        raise InvalidRequest(
            f"app id {app_id!r} must be a lower-case letter followed by 1–40 "
            "lower-case letters, digits or '_' (e.g. notes_app)"
        )
    if importlib.util.find_spec(app_id) is not None:
        raise InvalidRequest(
            f"app id {app_id!r} is the name of a Python module; the app package "
            f"would hide it (choose another id, e.g. {app_id}_app)"
        )
    name = (name if name is not None else _default_name(app_id)).strip()
    if not name or len(name) > 100 or any(ch in name for ch in "\r\n\x00"):
        raise InvalidRequest("app name must be one line of 1–100 characters")
    folder = Path(apps_dir) / app_id
    if folder.exists() or folder.is_symlink():
        raise AppExists(f"{folder} already exists; choose another app id")

    description = f"{name}：描述这个应用能做什么 (describe what this app does)"
    manifest = json.loads((TEMPLATE_DIR / "manifest.json").read_text("utf-8"))
    manifest["name"] = name
    manifest["description"] = description
    class_name = _class_name(app_id)
    values = {
        "name": name,
        "class_name": class_name,
        "flows_name": _flows_name(class_name),
        "name_literal": json.dumps(name, ensure_ascii=False),
        "description_literal": json.dumps(description, ensure_ascii=False),
        "app_id": app_id,
    }

    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.mkdir()  # fails if someone created it meanwhile
    (folder / "workspace").mkdir()
    (folder / "manifest.json").write_text(
        json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    for template in sorted(TEMPLATE_DIR.rglob("*.tmpl")):
        text = Template(template.read_text("utf-8")).substitute(values)
        made = folder / template.relative_to(TEMPLATE_DIR).with_name(
            template.name.removesuffix(".tmpl")
        )
        made.parent.mkdir(parents=True, exist_ok=True)
        made.write_text(text, encoding="utf-8")
    return folder
