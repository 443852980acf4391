"""How each app process is confined: bubblewrap, or nothing and why.

When bubblewrap works here, every app runs inside `aios_runtime.bubblewrap.bwrap_argv`:
the file system read-only, the app's own folder read-only and its workspace the only
writable place (besides a private `/tmp`), the state folder, the config file's
folder, the apps folders (other apps' code and workspaces), the repository (in an
installed copy its shipped files, `aios_runtime.shipped`), `/root` and `/home`
hidden under read-only empty mounts, with the Python installation and
the packages an app imports (`aios_sdk`, `aios_runtime`, the `app_site` folder) bound
back read-only. Its own PID namespace hides the other processes (their environment
holds the executor's master token and the other apps' tokens) and takes every
process the app forks along when it dies. The network namespace is shared: the app
must answer the controller and reach the executor on loopback, so a confined app can
reach the internet too; a manifest's `"network": true` only declares that it means
to, and is shown to the user.

A manifest's `"sandbox": false` runs the app unconfined only when the user listed it
in config.json's `app_sandbox.unconfined_apps`; otherwise it runs confined like any
other. `app_sandbox.use_bubblewrap: false` turns confinement off for every app.
"""

from __future__ import annotations

import os
import site
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from aios_runtime import shipped
from aios_runtime.bubblewrap import bwrap_argv, bwrap_works, find_bwrap, sandbox_layout
from aios_runtime.settings import AppSandboxSettings
from controller.apps.discovery import AppSpec

__all__ = ["AppConfinement", "AppSandboxSettings", "Confiner", "confined_pid"]

# what an app imports of ours; the rest of the repository stays hidden
_APP_PACKAGES = (
    shipped.PACKAGES_ROOT / "aios_protocol",
    shipped.PACKAGES_ROOT / "aios_sdk",
    shipped.PACKAGES_ROOT / "aios_runtime",
    Path(__file__).resolve().parent / "app_site",
)


@dataclass(frozen=True)
class AppConfinement:
    """How one app runs: `kind` "bubblewrap" or "none", and the reason in words."""

    kind: Literal["bubblewrap", "none"]
    note: str
    network: bool

    @property
    def confined(self) -> bool:
        return self.kind == "bubblewrap"


def _python_dirs() -> list[str]:
    """The Python installation and every folder it imports from (read-only)."""
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable)}
    try:
        dirs.update(site.getsitepackages())
        dirs.add(site.getusersitepackages())
    except AttributeError:  # a virtualenv's old site module
        pass
    dirs.update(p for p in sys.path if p and os.path.isdir(p))
    return sorted(d for d in dirs if os.path.isdir(d))


class Confiner:
    """Decides and builds the confinement of each app of one launch."""

    def __init__(
        self,
        settings: AppSandboxSettings,
        *,
        state_dir: Path,
        config_file: Path,
        apps_dirs: Iterable[Path],
    ):
        self.settings = settings
        self._bwrap = find_bwrap() if settings.use_bubblewrap else None
        self._works: bool | None = None
        self._lock = threading.Lock()
        # the repository (in an installed copy: its shipped files, not the
        # site-packages beside them) and the apps folders are hidden whole; what apps
        # must read is bound back (_APP_PACKAGES, the Python installation), never app code
        repository = shipped.ROOT
        never = [Path(state_dir), *apps_dirs]
        self._hidden = [
            "/root",
            "/home",
            str(repository),
            str(Path(config_file).parent),
            *(str(p) for p in never),
        ]
        self._readable = [
            *(str(p) for p in _APP_PACKAGES),
            *(
                d
                for d in _python_dirs()
                if not _under_any(d, never) and os.path.realpath(d) != str(repository)
            ),
        ]

    def prepare(self, spec: AppSpec) -> None:
        """Compile the app's modules beside them, which it cannot do itself when its
        folder is read-only (so a confined start does not compile every time)."""
        import compileall

        compileall.compile_dir(spec.folder, maxlevels=0, quiet=2, workers=1)

    def _bwrap_usable(self) -> bool:
        with self._lock:
            if self._works is None:
                self._works = bool(self._bwrap) and bwrap_works(
                    self._bwrap or "bwrap", share_network=True
                )
            return self._works

    def decide(self, spec: AppSpec) -> AppConfinement:
        manifest = spec.manifest
        network = bool(manifest and manifest.network)
        wants_out = manifest is not None and not manifest.sandbox
        if wants_out and spec.app_id in self.settings.unconfined_apps:
            return AppConfinement(
                "none",
                "trusted: its manifest asks for no sandbox and the user allowed it "
                "(app_sandbox.unconfined_apps)",
                network,
            )
        if not self.settings.use_bubblewrap:
            return AppConfinement("none", "app_sandbox.use_bubblewrap is off", network)
        if not self._bwrap:
            return AppConfinement(
                "none", "bubblewrap is not installed (apt-get install bubblewrap)", network
            )
        if not self._bwrap_usable():
            return AppConfinement("none", "bubblewrap does not work here", network)
        note = "bubblewrap: read-only system, writable workspace only, private /tmp"
        if wants_out:
            note += (
                "; its manifest asks for no sandbox, which needs the user's consent "
                "(app_sandbox.unconfined_apps)"
            )
        return AppConfinement("bubblewrap", note, network)

    def command(
        self,
        spec: AppSpec,
        argv: Sequence[str],
        how: AppConfinement,
        workdir: Path | None = None,
    ) -> list[str]:
        """`argv` as the app is started: inside bubblewrap when `how` says so, its
        one writable folder `workdir` (default: the app's own workspace)."""
        if not how.confined:
            return list(argv)
        workdir = workdir or spec.workdir
        assert workdir is not None
        return bwrap_argv(
            self._bwrap or "bwrap",
            argv,
            cwd=spec.folder,
            hidden=self._hidden,
            readable=[*self._readable, spec.folder],
            writable=[workdir],
            share_network=True,
            new_session=False,  # stays in its group: stop_groups' SIGTERM reaches it
            read_only_masks=True,
        )

    def fork_plan(
        self, spec: AppSpec, how: AppConfinement, workdir: Path | None = None
    ) -> dict[str, Any]:
        """What the app template needs to fork this app (`aios_sdk.zygote`): its
        entry and folder and, when `how` confines it, the same layout bubblewrap
        would mount (`command`, `workdir` the one writable folder), which the forked
        child applies to itself."""
        plan: dict[str, Any] = {
            "entry": str(spec.entry),
            "cwd": str(spec.folder),
            "confine": how.confined,
        }
        if how.confined:
            workdir = workdir or spec.workdir
            assert workdir is not None
            layout = sandbox_layout(self._hidden, [*self._readable, spec.folder], [workdir])
            plan.update(
                masks=list(layout.masks),
                read_only=list(layout.read_only),
                writable=list(layout.writable),
            )
        return plan


def _under_any(path: str, folders: Iterable[Path]) -> bool:
    real = os.path.realpath(path)
    for folder in folders:
        top = os.path.realpath(folder)
        if real == top or real.startswith(top.rstrip("/") + "/"):
            return True
    return False


def confined_pid(proc: Any) -> int | None:
    """The pid of the app itself: below bubblewrap's own two processes (None while
    bubblewrap is still setting up), or the forked process itself."""
    import psutil

    if getattr(proc, "forked", False):
        return int(proc.pid)
    try:
        for init in psutil.Process(proc.pid).children():
            for app in init.children():
                return app.pid
    except psutil.Error:
        return None
    return None
