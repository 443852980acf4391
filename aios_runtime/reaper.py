"""A reaper that outlives its owner by a moment and kills what the owner started.

`PR_SET_PDEATHSIG` binds a direct child to its parent, but bubblewrap sets the death
signal of its own sandboxed process only after mounting the sandbox: a parent that
dies during those few milliseconds leaves the sandbox running, orphaned. So each owner
(the controller, each executor) starts one `start_reaper` at
start-up: a tiny `/bin/sh` in its own session that blocks reading a pipe whose only
write end the owner holds. When the owner dies, however it dies, the pipe reads
end-of-file and the reaper SIGKILLs, repeating until none is left, every process
whose environment carries `environment_mark` and every process in the cgroups
below `cgroup_home`; then it exits.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["start_reaper"]

# $1: the environment entry to look for ("" for none); $2: a cgroup folder ("" for none)
_SCRIPT = r"""
cat >/dev/null
rounds=0
while [ $rounds -lt 100 ]; do
  found=
  if [ -n "$1" ]; then
    for f in $(grep -lsF -e "$1" /proc/[0-9]*/environ); do
      p=${f#/proc/}; p=${p%/environ}
      [ "$p" != $$ ] && kill -9 "$p" 2>/dev/null && found=1
    done
  fi
  if [ -n "$2" ]; then
    for f in "$2"/*/cgroup.procs; do
      for p in $(cat "$f" 2>/dev/null); do kill -9 "$p" 2>/dev/null && found=1; done
    done
  fi
  [ -z "$found" ] && break
  rounds=$((rounds + 1))
done
[ -n "$2" ] && rmdir "$2"/* "$2" 2>/dev/null
exit 0
"""

_held: list[int] = []  # write ends: open for the owner's whole life, never closed


def start_reaper(
    *, environment_mark: str | None = None, cgroup_home: Path | None = None
) -> subprocess.Popen | None:
    """Start the reaper of this process (see the module docstring); None if `/bin/sh`
    cannot be run. `environment_mark` is a `NAME=value` entry that only processes
    started by this owner carry."""
    if not environment_mark and cgroup_home is None:
        return None
    read_end, write_end = os.pipe()  # neither is inherited by other children
    try:
        proc = subprocess.Popen(
            [
                "/bin/sh",
                "-c",
                _SCRIPT,
                "aios-reaper",
                environment_mark or "",
                str(cgroup_home or ""),
            ],
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={"PATH": "/usr/bin:/bin"},
            start_new_session=True,
        )
    except OSError:
        os.close(write_end)
        return None
    finally:
        os.close(read_end)
    _held.append(write_end)
    return proc
