"""`file_import`: the audio files of a folder the user names, copied into the workdir.

The folder may be anywhere the executor can read (`~/Music` by default in the music
app); what is copied is fenced by content instead: only regular files whose first
bytes are audio (`aios_runtime.audio`), no symlink and nothing hidden, each within
`limits.file_size_bytes`, at most `limits.file_list_max` of them. The plan asks the
user first (the tool `requires_confirmation`; the controller's question says how
many files from where). A file keeps its name below `dest`, numbered when that name
is taken; nothing in the workdir is replaced.
"""

from __future__ import annotations

import shutil
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from aios_protocol.errors import AiosError
from aios_runtime.audio import audio_files, folder_of
from aios_runtime.workdir import display_path, resolve_in_workdir

if TYPE_CHECKING:
    from executor.toolbox import ToolContext

__all__ = ["file_import"]


def _free(target: Path) -> Path:
    """`target`, or `target` numbered (`a_2.mp3`, …) when a file of that name is there."""
    candidate, number = target, 2
    while candidate.exists() or candidate.is_symlink():
        candidate = target.with_name(f"{target.stem}_{number}{target.suffix}")
        number += 1
    return candidate


def file_import(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    source = folder_of(str(args["source"]))
    if not source.is_dir():
        raise AiosError(f"{args['source']!r} is not a folder", code="file_not_found")
    workdir = ctx.app.workdir
    dest = resolve_in_workdir(workdir, args["dest"])
    limits = ctx.settings.limits
    found, too_large = audio_files(
        source, max_bytes=limits.file_size_bytes, limit=limits.file_list_max
    )
    copied: list[str] = []
    for song in found:
        relative = PurePosixPath(song.relative)
        # each target is resolved inside the workdir again: no name leads out of it
        target = _free(resolve_in_workdir(workdir, str(dest / relative)))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(song.path, target, follow_symlinks=False)
        copied.append(display_path(target, workdir))
    return {
        "source": str(source),
        "dest": display_path(dest, workdir),
        "copied": copied,
        "too_large": too_large,  # audio files left out for their size
        "limited": len(found) >= limits.file_list_max,  # more may be there
    }
