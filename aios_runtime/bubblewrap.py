"""The one builder of bubblewrap (`bwrap`) command lines, for tool processes and apps.

`bwrap_argv` wraps a command in a confinement: the whole file system read-only, a
private `/dev`, `/proc` (with its own PID namespace) and `/tmp`, the given folders
hidden under empty tmpfs mounts, the given folders bound back read-only and the
given folders bound read-write, its own IPC namespace, every capability dropped,
and `--die-with-parent`; the network namespace is unshared unless `share_network`.
The executor's tool processes (`executor.sandbox.runner`) and the controller's app
processes (`controller.apps.confinement`) both build their command here, so the two
sandboxes differ only in the arguments they pass. `bwrap_works` probes for real that
bubblewrap can create the namespaces on this machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from aios_runtime.workdir import is_inside

__all__ = [
    "SYSTEM_DIRS",
    "SandboxLayout",
    "bwrap_argv",
    "bwrap_works",
    "find_bwrap",
    "mask_list",
    "sandbox_layout",
]

# never hidden: the sandboxed command could not run without them
SYSTEM_DIRS = frozenset({"/", "/usr", "/bin", "/lib", "/lib64", "/etc", "/proc", "/dev"})


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def bwrap_works(bwrap: str, *, share_network: bool = False) -> bool:
    """True when `bwrap` can build a sandbox like `bwrap_argv`'s here (run for real)."""
    argv = [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--unshare-pid",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
    ]
    if not share_network:
        argv.append("--unshare-net")
    try:
        done = subprocess.run(
            [*argv, "--", "/bin/true"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def mask_list(paths: Iterable[str | os.PathLike[str]], keep: Iterable[str]) -> list[str]:
    """The real paths of `paths` to hide: existing folders, never a system folder nor
    one of `keep`, and none already inside `/tmp` or a broader mask."""
    kept = {os.path.realpath(k) for k in keep}
    wanted: list[str] = []
    for path in paths:
        real = os.path.realpath(path)
        if real in SYSTEM_DIRS or real in kept or not os.path.isdir(real):
            continue
        wanted.append(real)
    masks: list[str] = []
    for real in sorted(set(wanted), key=len):  # broader first
        if not any(is_inside(Path(real), Path(m)) for m in ["/tmp", *masks]):
            masks.append(real)
    return masks


@dataclass(frozen=True)
class SandboxLayout:
    """What a confinement mounts over the read-only file system: `masks` hidden under
    empty tmpfs mounts, `read_only` folders bound back read-only (only those a mask or
    the private `/tmp` would hide) and `writable` folders bound read-write, each at its
    own real path. Bubblewrap's command (`bwrap_argv`) and the app template's forked
    children (`aios_runtime.namespaces`) both apply this one layout."""

    masks: tuple[str, ...]
    read_only: tuple[str, ...]
    writable: tuple[str, ...]


def sandbox_layout(
    hidden: Iterable[str | os.PathLike[str]] = (),
    readable: Iterable[str | os.PathLike[str]] = (),
    writable: Iterable[str | os.PathLike[str]] = (),
) -> SandboxLayout:
    """The layout hiding `hidden`, binding back what of `readable` they (or the
    private `/tmp`) hide, and binding `writable` read-write (real paths)."""
    bound = [os.path.realpath(w) for w in writable]
    masks = mask_list(hidden, keep=bound)
    read_only: list[str] = []
    for path in readable:
        real = os.path.realpath(path)
        if os.path.exists(real) and any(
            is_inside(Path(real), Path(m)) for m in ["/tmp", *masks]
        ):
            read_only.append(real)
    return SandboxLayout(tuple(masks), tuple(read_only), tuple(bound))


def bwrap_argv(
    bwrap: str,
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    hidden: Iterable[str | os.PathLike[str]] = (),
    readable: Iterable[str | os.PathLike[str]] = (),
    writable: Iterable[str | os.PathLike[str]] = (),
    share_network: bool = False,
    new_session: bool = True,
    read_only_masks: bool = False,
) -> list[str]:
    """`argv` inside bubblewrap (see the module docstring).

    `readable` folders are bound back read-only only where a mask or the private
    `/tmp` would hide them (elsewhere they are readable already); `writable` folders
    are bound read-write at their own path, after everything else. With
    `read_only_masks` the tmpfs mounts that hide folders are made read-only too, so
    the only writable places are `writable` and the private `/tmp`. Without
    `new_session` the command stays in the caller's process group (so a signal to
    that group reaches it).
    """
    layout = sandbox_layout(hidden, readable, writable)
    wrapped = [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--unshare-pid",
        "--unshare-ipc",
        "--die-with-parent",
        "--cap-drop",
        "ALL",
    ]
    if not share_network:
        wrapped.append("--unshare-net")
    if new_session:
        wrapped.append("--new-session")
    for mask in layout.masks:
        wrapped += ["--tmpfs", mask]
    for real in layout.read_only:
        wrapped += ["--ro-bind", real, real]
    for real in layout.writable:
        wrapped += ["--bind", real, real]
    if read_only_masks:
        for mask in layout.masks:
            wrapped += ["--remount-ro", mask]
    wrapped += ["--chdir", str(cwd), "--", *argv]
    return wrapped
