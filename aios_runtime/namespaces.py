"""Confining an already running (forked) process the way bubblewrap confines a new one.

Bubblewrap can only start a new program; a child forked from the app template
(`aios_sdk.zygote`) must confine itself instead, before any app code runs. It
does so with the same system calls bubblewrap makes, through libc (Python 3.11 has
no `os.unshare`), in two steps:

- `fork_confined()`, in the template: forks a child that is the first process of a
  new PID namespace (it sees no other process, and every process it forks dies with
  it); the template's own namespace for later children is restored at once.
- `enter_sandbox(layout, cwd)`, in that child: new mount and IPC namespaces; the
  whole mount tree made private and read-only; a private `/tmp`, its own `/proc`, a
  minimal read-only `/dev` (null, zero, full, random, urandom, tty); every mask of
  the `SandboxLayout` (`aios_runtime.bubblewrap`) an empty tmpfs, the layout's
  read-only folders bound back read-only, its writable folders bound read-write, the
  masks then made read-only. The folders to bind are opened before anything is
  hidden and bound from those descriptors, so a mask never hides what must come
  back. Last, every capability is dropped (bounding set, ambient, effective,
  permitted, inheritable) and `no_new_privs` set, so nothing it runs can undo the
  mounts.

This needs the right to create those namespaces (root, as the controller runs here);
`probe()` tries it for real in a throw-away child. Any failure raises `OSError`: the
caller must never run the app after a failed step.
"""

from __future__ import annotations

import ctypes
import os
import stat
from pathlib import Path

from aios_runtime.bubblewrap import SandboxLayout

__all__ = ["enter_sandbox", "fork_confined", "probe", "set_death_signal"]

_CLONE_NEWNS = 0x00020000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWPID = 0x20000000

_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18

_AT_FDCWD = -100
_AT_RECURSIVE = 0x8000
_MOUNT_ATTR_RDONLY = 0x1

_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAP_VERSION_3 = 0x20080522

# (name, major, minor) of the character devices a confined process may open
_DEVICES = (
    ("null", 1, 3),
    ("zero", 1, 5),
    ("full", 1, 7),
    ("random", 1, 8),
    ("urandom", 1, 9),
    ("tty", 5, 0),
)
_DEV_LINKS = (
    ("fd", "/proc/self/fd"),
    ("stdin", "/proc/self/fd/0"),
    ("stdout", "/proc/self/fd/1"),
    ("stderr", "/proc/self/fd/2"),
)

_libc = ctypes.CDLL(None, use_errno=True)


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else os.fsencode(text)


def _mount(
    source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None
) -> None:
    _check(
        _libc.mount(
            _bytes(source),
            _bytes(target),
            _bytes(fstype),
            ctypes.c_ulong(flags),
            _bytes(data),
        ),
        f"mount {target}",
    )


def _remount(target: str, flags: int) -> None:
    _mount(None, target, None, _MS_REMOUNT | _MS_BIND | flags)


def _tmpfs(target: str, flags: int = _MS_NOSUID | _MS_NODEV) -> None:
    _mount("tmpfs", target, "tmpfs", flags, "mode=0755")


def set_death_signal(signal_number: int) -> None:
    """This process gets `signal_number` when its parent (the forking thread) dies."""
    _check(_libc.prctl(_PR_SET_PDEATHSIG, signal_number, 0, 0, 0), "prctl PDEATHSIG")


def _all_read_only() -> None:
    attr = _MountAttr(attr_set=_MOUNT_ATTR_RDONLY)
    _check(
        _libc.mount_setattr(
            _AT_FDCWD, b"/", _AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr)
        ),
        "mount_setattr / read-only",
    )


def _minimal_dev() -> None:
    _tmpfs("/dev", _MS_NOSUID)
    for name, major, minor in _DEVICES:
        os.mknod(f"/dev/{name}", 0o666 | stat.S_IFCHR, os.makedev(major, minor))
        os.chmod(f"/dev/{name}", 0o666)  # mknod applies the umask
    for name, target in _DEV_LINKS:
        os.symlink(target, f"/dev/{name}")
    _remount("/dev", _MS_RDONLY | _MS_NOSUID)


def fork_confined() -> int:
    """`os.fork()`, the child being the first process of a new PID namespace (pid 1
    there); the caller's later children are born in its own namespace again."""
    own = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    try:
        _check(_libc.unshare(_CLONE_NEWPID), "unshare PID namespace")
        pid = -1
        try:
            pid = os.fork()
        finally:
            if pid != 0:  # the parent (or a failed fork): back to its own namespace
                _check(_libc.setns(own, _CLONE_NEWPID), "setns PID namespace")
        return pid
    finally:
        os.close(own)


def enter_sandbox(layout: SandboxLayout, cwd: str) -> None:
    """Confine this process (single-threaded, forked by `fork_confined`) to `layout`
    in new mount and IPC namespaces, then drop every capability (see the module
    docstring)."""
    _check(_libc.unshare(_CLONE_NEWNS | _CLONE_NEWIPC), "unshare")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)  # nothing leaks back to the host
    # opened before anything is hidden: each bind comes from its descriptor
    sources = {
        path: os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        for path in (*layout.read_only, *layout.writable)
    }
    try:
        _all_read_only()
        _tmpfs("/tmp")
        _minimal_dev()
        for mask in layout.masks:
            _tmpfs(mask)
        for path in layout.read_only:
            os.makedirs(path, exist_ok=True)  # inside a mask or /tmp: its tmpfs
            _mount(f"/proc/self/fd/{sources[path]}", path, None, _MS_BIND | _MS_REC)
            _remount(path, _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
        for path in layout.writable:
            os.makedirs(path, exist_ok=True)
            _mount(f"/proc/self/fd/{sources[path]}", path, None, _MS_BIND)
            _remount(path, _MS_NOSUID | _MS_NODEV)  # the bind of a read-only mount: rw
        for mask in layout.masks:
            _remount(mask, _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
        _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    finally:
        for fd in sources.values():
            os.close(fd)
    os.chdir(cwd)
    _drop_capabilities()


def _last_capability() -> int:
    try:
        return int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        return 63


def _drop_capabilities() -> None:
    """No capability left, and none to regain."""
    for cap in range(_last_capability() + 1):
        _check(_libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), f"drop capability {cap}")
    _check(
        _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient"
    )
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def probe() -> str | None:
    """Why a forked child cannot confine itself here (None when it can): a throw-away
    child, forked into its own PID namespace, enters a sandbox hiding `/home`."""
    try:
        pid = fork_confined()
    except OSError as exc:
        return f"a new PID namespace cannot be made here ({exc.strerror})"
    if pid == 0:
        code = 1
        try:
            enter_sandbox(SandboxLayout(("/home",), (), ()), "/")
            code = 0 if os.getpid() == 1 and os.listdir("/home") == [] else 3
        except BaseException:
            code = 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code == 0:
        return None
    if code == 2:
        return "the mounts or the capabilities of a confinement cannot be set here"
    return "a confined child did not see what its confinement should show"
