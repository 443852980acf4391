"""App discovery: the apps folder scanned into app specs.

Every subfolder holding a `manifest.json` is an app whose id is the folder name.
A manifest that is not valid JSON, misses a required field, names an entry file that
does not exist or has no role (`role_prompt` in the manifest or a `role.md` beside
it) makes that one app a *failed* spec whose `error` names the field at fault; the
others are unaffected. A `requirements.txt` naming packages that are not installed
is reported in `requirements_note` with the command that installs them.

Given a `workspaces` folder (the launcher passes `<state_dir>/workspaces`), an app's
workdir is `<workspaces>/<app_id>/`, not its folder's `workspace/`: the app folder
stays as shipped. The shipped workspace files are copied there when that folder is
first created, and never again, so nothing is ever copied over the user's files.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from aios_protocol.messages import Language, Manifest, describe_validation_error
from aios_runtime.workdir import is_inside

__all__ = [
    "APP_ID_PATTERN",
    "AppSpec",
    "check_requirements",
    "discover_apps",
    "load_app",
    "seeded_workspace",
]

APP_ID_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass
class AppSpec:
    """One app folder as found on disk; `error` set means it cannot be started."""

    app_id: str
    folder: Path
    manifest: Manifest | None = None
    role: str = ""
    workdir: Path | None = None
    entry: Path | None = None
    error: str | None = None
    requirements_note: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.manifest is not None

    @property
    def name(self) -> str:
        return self.manifest.name if self.manifest else self.app_id

    @property
    def icon(self) -> str:
        return self.manifest.icon if self.manifest else "⚠️"

    @property
    def description(self) -> str:
        return self.manifest.description if self.manifest else ""

    @property
    def names(self) -> dict[Language, str]:
        """The manifest's name in each language it gives one."""
        return dict(self.manifest.names) if self.manifest else {}

    @property
    def descriptions(self) -> dict[Language, str]:
        return dict(self.manifest.descriptions) if self.manifest else {}

    @property
    def handle_endpoint(self) -> str:
        return self.manifest.handle_endpoint if self.manifest else "/handle"


def discover_apps(apps_dir: Path, workspaces: Path | None = None) -> list[AppSpec]:
    """Every app under `apps_dir`, sorted by id; broken ones carry their `error`.

    With `workspaces`, each app's workdir is `<workspaces>/<app_id>/` (see above)."""
    apps_dir = Path(apps_dir)
    if not apps_dir.is_dir():
        return []
    specs = []
    for folder in sorted(apps_dir.iterdir(), key=lambda p: p.name):
        if not folder.is_dir() or folder.name.startswith((".", "_")):
            continue
        if not (folder / "manifest.json").is_file():
            continue
        specs.append(load_app(folder, workspaces))
    return specs


def load_app(folder: Path, workspaces: Path | None = None) -> AppSpec:
    """Read one app folder into a spec; never raises for a broken app."""
    folder = Path(folder).resolve()
    spec = AppSpec(app_id=folder.name, folder=folder)
    if not APP_ID_PATTERN.match(folder.name):
        spec.error = (
            f"folder name {folder.name!r} is not a valid app id "
            "(letters, digits, '_', '-', '.'; at most 64)"
        )
        return spec
    manifest_path = folder / "manifest.json"
    try:
        raw = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        spec.error = f"manifest.json: cannot be read ({exc})"
        return spec
    except json.JSONDecodeError as exc:
        spec.error = f"manifest.json: not valid JSON (line {exc.lineno}: {exc.msg})"
        return spec
    if not isinstance(raw, dict):
        spec.error = "manifest.json: must hold a JSON object"
        return spec
    from pydantic import ValidationError

    try:
        manifest = Manifest.model_validate(raw)
    except ValidationError as exc:
        spec.error = f"manifest.json: {describe_validation_error(exc)}"
        return spec
    spec.manifest = manifest
    spec.error = _check_layout(spec, manifest, workspaces)
    if spec.error is None:
        spec.requirements_note = check_requirements(folder)
    return spec


def _check_layout(
    spec: AppSpec, manifest: Manifest, workspaces: Path | None = None
) -> str | None:
    """Entry, workdir and role; the first problem found, naming its field."""
    folder = spec.folder
    entry = (folder / manifest.entry).resolve()
    if not is_inside(entry, folder):
        return f"manifest.json: entry: {manifest.entry!r} is outside the app folder"
    if not entry.is_file():
        return f"manifest.json: entry: file {manifest.entry!r} not found"
    spec.entry = entry

    workdir = (folder / manifest.workdir).resolve()
    if not is_inside(workdir, folder):
        return f"manifest.json: workdir: {manifest.workdir!r} is outside the app folder"
    try:
        if workspaces is None:
            workdir.mkdir(parents=True, exist_ok=True)
        else:
            workdir = seeded_workspace(Path(workspaces), spec.app_id, shipped=workdir)
    except OSError as exc:
        return f"manifest.json: workdir: cannot create {manifest.workdir!r} ({exc})"
    spec.workdir = workdir

    role = (manifest.role_prompt or "").strip()
    role_file = folder / "role.md"
    if not role and role_file.is_file():
        try:
            role = role_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            return f"role.md: cannot be read ({exc})"
    if not role:
        return "manifest.json: role_prompt: required (in manifest.json or in role.md)"
    spec.role = role
    return None


def seeded_workspace(workspaces: Path, app_id: str, shipped: Path) -> Path:
    """`<workspaces>/<app_id>`, created on first use as a copy of the `shipped` files."""
    target = (workspaces / app_id).resolve()
    if target.is_dir():
        return target
    workspaces.mkdir(parents=True, exist_ok=True)
    partial = workspaces / f".{app_id}.copying"
    shutil.rmtree(partial, ignore_errors=True)
    if shipped.is_dir():
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(shipped, partial, ignore=ignore, symlinks=True)
    else:
        partial.mkdir()
    partial.rename(target)  # whole or not at all: a crash mid-copy leaves no workspace
    return target


def check_requirements(folder: Path) -> str | None:
    """A readable note naming the packages of `requirements.txt` that are missing.

    Names are checked against the installed distributions; version specifiers are
    checked too when the `packaging` library happens to be installed.
    """
    path = Path(folder) / "requirements.txt"
    if not path.is_file():
        return None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        return f"requirements.txt: cannot be read ({exc})"
    missing = [line.strip() for line in lines if _requirement_missing(line)]
    if not missing:
        return None
    return (
        f"requirements.txt: not installed: {', '.join(missing)} — install with: "
        f"python3 -m pip install -r {path}"
    )


def _requirement_missing(line: str) -> bool:
    line = line.split("#", 1)[0].strip()
    if not line or line.startswith("-"):
        return False
    match = _REQUIREMENT_NAME.match(line)
    if match is None:
        return False
    requirement = _parsed_requirement(line)
    marker = requirement.marker if requirement is not None else None
    if marker is not None and not marker.evaluate():
        return False
    from importlib import metadata

    try:
        version = metadata.version(match.group(1))
    except metadata.PackageNotFoundError:
        return True
    if requirement is None:
        return False
    return not requirement.specifier.contains(version, prereleases=True)


def _parsed_requirement(line: str):  # -> packaging Requirement | None
    """The line parsed by `packaging` when it is installed; None otherwise."""
    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:
        return None
    try:
        return Requirement(line)
    except InvalidRequirement:
        return None
