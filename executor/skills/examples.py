"""The repository's example skills in a skills folder: copied in, and kept up to date.

At the first start (no folder yet) the examples are copied in, installed as
`install_skill` would install them (without the `--help` check: they are ours and a
scan reads them anyway). Every later start brings a copy up to date when the shipped
example changed and the copy is still exactly what was shipped before; a copy the
user edited is kept (and said so in the log), one the user deleted stays deleted,
and an example new since the folder was made is copied in. What was copied is
recorded in the folder, `.examples.json`: by the name it is installed under, the
SHA-256 of the version of each example last copied (or last offered, for a copy the
user changed: it is not offered again); a scan ignores names starting with `.`. A
folder made before that record existed is judged by `EARLIER_VERSIONS`, the SHA-256
of every version of each example shipped before it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from aios_runtime.files import atomic_write_text, read_state
from executor.skills.catalog import SKILL_FILE, ignored_name
from executor.skills.install import EXECUTABLE, STAGING, installed_name

__all__ = ["EARLIER_VERSIONS", "RECORD", "Examples", "content_hash", "seed_examples"]

RECORD = ".examples.json"
# installed name → the SHA-256 of each version shipped before copies were recorded
EARLIER_VERSIONS: dict[str, frozenset[str]] = {
    "code_review.md": frozenset(
        {
            "a2027947cff126ba55c9234b10055980f72d6ca5e2cc72d5f5676043000d57ce",
            "086bd762c79b517004f99379175667ae2e617f74a2381e20e0fed2c0832fd329",
        }
    ),
    "temp_convert": frozenset(
        {
            "72cb3718269085644867d532c2dd09fecbd70bde4082af4343b31f169c7da499",
            "8a27eaaf29ddc58ec0f411c25c98e09bfa2be39dec9a91cf1b1002b1818c0a5b",
        }
    ),
    "text_stats": frozenset(
        {
            "a48a8e98547e80dba2bb653ff0964c405b44715d28bdef4e118ae00fc2c33fc2",
            "eb59a2289fc77d7695d5b1ec6413f6ad6501f9f12371315552241cc4a388cb2d",
        }
    ),
}


@dataclass
class Examples:
    """What `seed_examples` did, by installed name."""

    copied: list[str] = field(default_factory=list)  # new in the folder
    updated: list[str] = field(default_factory=list)  # unchanged copies brought up to date
    kept: list[str] = field(default_factory=list)  # copies the user changed, of a new one

    def __bool__(self) -> bool:
        return bool(self.copied or self.updated or self.kept)


def content_hash(path: Path) -> str | None:
    """The SHA-256 of a file's bytes, or of a folder's files (their relative paths
    and bytes, in order); None when it cannot be read."""
    digest = hashlib.sha256()
    try:
        if path.is_symlink():
            return None
        if path.is_file():
            digest.update(path.read_bytes())
            return digest.hexdigest()
        if not path.is_dir():
            return None
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                file = Path(root) / name
                digest.update(file.relative_to(path).as_posix().encode() + b"\0")
                digest.update(hashlib.sha256(file.read_bytes()).digest())
    except OSError:
        return None
    return digest.hexdigest()


def _shipped(examples: Path | None) -> dict[str, Path]:
    """The examples by the name they are installed under."""
    if examples is None or not examples.is_dir():
        return {}
    found = {}
    for source in sorted(examples.iterdir()):
        if ignored_name(source.name) or source.is_symlink():
            continue
        if source.is_dir() and not (source / SKILL_FILE).is_file():
            continue
        found[installed_name(source)] = source
    return found


def _parse_record(text: str) -> dict[str, str]:
    raw = json.loads(text)
    shipped = raw.get("shipped") if isinstance(raw, dict) else None
    if not isinstance(shipped, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in shipped.items()
    ):
        raise ValueError("no map of the examples to the hashes of their versions")
    return dict(shipped)


def _copy(source: Path, folder: Path, name: str) -> None:
    """Put `source` in `folder` as `name` (replacing what is there in one rename)."""
    staging = folder / STAGING / uuid.uuid4().hex
    staging.mkdir(parents=True)
    try:
        staged = staging / name
        if source.is_dir():
            shutil.copytree(source, staged)
        else:
            shutil.copyfile(source, staged)
            if not name.endswith(".md"):
                os.chmod(staged, EXECUTABLE)
        target = folder / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        os.replace(staged, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        try:
            (folder / STAGING).rmdir()  # left while an install is under way
        except OSError:
            pass


def seed_examples(folder: Path, examples: Path | None) -> Examples:
    """Copy the examples into `folder` (made when missing), or bring the copies the
    user left as they were up to date; never over a copy the user changed."""
    first = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / RECORD
    record = None if first else read_state(path, _parse_record, "a record of examples")
    # name → the shipped version last copied (or offered, for a copy the user changed)
    shipped: dict[str, str] = dict(record or {})
    done = Examples()
    for name, source in _shipped(examples).items():
        new = content_hash(source)
        if new is None:
            continue
        last = shipped.get(name)
        shipped[name] = new
        target = folder / name
        if not (target.exists() or target.is_symlink()):
            known = last is not None or (record is None and name in EARLIER_VERSIONS)
            if first or not known:  # a copy the user deleted stays away
                _copy(source, folder, name)
                done.copied.append(name)
            continue
        have = content_hash(target)
        if have == new or last == new:  # up to date, or changed by the user since
            continue
        before = {last} if last is not None else EARLIER_VERSIONS.get(name, frozenset())
        if have is not None and have in before:  # as shipped before: replaced
            _copy(source, folder, name)
            done.updated.append(name)
        else:
            done.kept.append(name)
    if first or shipped != record:
        body = {"shipped": dict(sorted(shipped.items()))}
        atomic_write_text(path, json.dumps(body, indent=1))
    return done
