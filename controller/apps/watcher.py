"""The apps folder watched while the system runs: apps appear, change and go.

`AppsFolderWatcher` follows the apps folder with `watchfiles` (inotify underneath)
on one thread and maps every change to the app folder it lies in. Each touched app
is read again (`load_app`) and handed to the supervisor's `apply_spec`: a new
folder with a `manifest.json` is added (idle until first use), a folder whose code
or manifest changed is replaced (restarted if it was running), a folder that is
gone (or lost its manifest) is removed, and a broken manifest replaces the app by
its error. Hidden folders (`.installing-…`, `.removing-…`), `__pycache__`, compiled
files and the app's shipped `workspace/` are not changes of the app. A manifest
that changes while it is read is read again until two reads agree; a folder whose
content did not change (same files, sizes and times) is left alone. `rescan` does
the same at once for given apps (the installer's API calls it, so an install is
registered before it answers).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from controller.apps.discovery import AppSpec, load_app

__all__ = ["AppsFolderWatcher", "folder_signature"]

log = logging.getLogger("aios.controller.watcher")

_IGNORED_DIRS = {"__pycache__", ".git", "node_modules", ".mypy_cache", ".pytest_cache"}
_IGNORED_SUFFIXES = (".pyc", ".pyo", ".swp", ".swx", "~", ".tmp")
_READ_ATTEMPTS = 5


def folder_signature(folder: Path, skip: Path | None = None) -> tuple:
    """What changes when any file of the app changes: (path, size, mtime, inode) of
    each, and the manifest's bytes (rewritten twice within one clock tick at the same
    size, it would look unchanged otherwise); `__pycache__`, compiled files and the
    folder `skip` (its workspace) left out."""
    rows: list[tuple] = []
    for top, dirs, files in os.walk(folder):
        here = Path(top)
        dirs[:] = sorted(
            d for d in dirs if d not in _IGNORED_DIRS and (skip is None or here / d != skip)
        )
        for name in sorted(files):
            if name.endswith(_IGNORED_SUFFIXES):
                continue
            path = here / name
            try:
                info = path.stat()
                content = path.read_bytes() if path == folder / "manifest.json" else b""
            except OSError:
                continue
            rel = str(path.relative_to(folder))
            rows.append((rel, info.st_size, info.st_mtime_ns, info.st_ino, content))
    return tuple(rows)


def _workdir_of(folder: Path) -> Path | None:
    import json

    try:
        raw = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        return (folder / str(raw.get("workdir") or "workspace")).resolve()
    except (OSError, ValueError, AttributeError):
        return (folder / "workspace").resolve()


class AppsFolderWatcher:
    """Keeps the supervisor's apps in line with the folders of `apps_dir`."""

    def __init__(
        self,
        apps_dir: Path,
        workspaces: Path | None,
        apply: Callable[[str, AppSpec | None], str],
        installed: Callable[[], dict[str, AppSpec]],
        *,
        on_change: Callable[[str, str, AppSpec | None], None] | None = None,
        debounce_ms: int = 800,
        step_ms: int = 120,
    ):
        self.apps_dir = Path(apps_dir).resolve()
        self._workspaces = workspaces
        self._apply = apply
        self._installed = installed
        self._on_change = on_change or (lambda app_id, what, spec: None)
        self._debounce = debounce_ms
        self._step = step_ms
        self._stop = threading.Event()
        self._lock = threading.Lock()  # one rescan at a time
        self._signatures: dict[str, tuple] = {}
        self._thread: threading.Thread | None = None
        self.ready = threading.Event()  # set once the watch is in place

    def start(self, known: Iterable[AppSpec] = ()) -> None:
        """Watch on a daemon thread; `known` are the apps the launch found."""
        known = list(known)
        self._thread = threading.Thread(
            target=self._run, args=(known,), name="apps-watcher", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=3)

    # ------------------------------------------------------------ watching

    def _run(self, known: list[AppSpec]) -> None:
        from watchfiles import DefaultFilter, watch

        with self._lock:
            for spec in known:
                self._signatures[spec.app_id] = self._signature(spec.app_id)

        class _AppsFilter(DefaultFilter):
            def __call__(inner, change, path: str) -> bool:  # noqa: N805
                return super().__call__(change, path) and self._app_of(path) is not None

        try:
            self.apps_dir.mkdir(parents=True, exist_ok=True)
            # rust_timeout: wake up now and then to see the stop event
            batches = watch(
                self.apps_dir,
                watch_filter=_AppsFilter(),
                debounce=self._debounce,
                step=self._step,
                stop_event=self._stop,
                rust_timeout=500,
                yield_on_timeout=True,
                raise_interrupt=False,
            )
            for changes in batches:
                if self._stop.is_set():
                    return
                if not self.ready.is_set():  # the watch is in place from here on:
                    self.ready.set()  # catch what changed before it was
                    self.rescan()
                touched = {a for _, path in changes if (a := self._app_of(path))}
                if touched:
                    self.rescan(touched)
        except Exception:  # the system runs on without hot install
            log.exception(
                "watching %s failed; installed apps need a restart", self.apps_dir
            )
        finally:
            self.ready.set()

    def _app_of(self, path: str) -> str | None:
        """The app id a changed path belongs to; None for what is no app's change."""
        try:
            rel = Path(path).resolve().relative_to(self.apps_dir)
        except (ValueError, OSError):
            return None
        parts = rel.parts
        if not parts or parts[0].startswith((".", "_")):
            return None
        if any(p in _IGNORED_DIRS for p in parts) or parts[-1].endswith(_IGNORED_SUFFIXES):
            return None
        return parts[0]

    # ------------------------------------------------------------- rescan

    def rescan(self, app_ids: Iterable[str] | None = None) -> dict[str, str]:
        """Read the given apps (every folder and known app when None) again and apply
        what changed; app id → what was done (added, replaced, removed, broken,
        unchanged)."""
        with self._lock:
            if app_ids is None:
                on_disk = {
                    p.name
                    for p in self.apps_dir.iterdir()
                    if p.is_dir() and not p.name.startswith((".", "_"))
                }
                app_ids = on_disk | set(self._installed())
            done = {}
            for app_id in sorted(set(app_ids)):
                try:
                    done[app_id] = self._rescan_one(app_id)
                except Exception:  # one bad folder never stops the others
                    log.exception("app %s: could not be read again", app_id)
                    done[app_id] = "unchanged"
            return done

    def _rescan_one(self, app_id: str) -> str:
        folder = self.apps_dir / app_id
        known = self._installed().get(app_id)
        present = folder.is_dir() and (folder / "manifest.json").is_file()
        if not present:
            self._signatures.pop(app_id, None)
            if known is None:
                return "unchanged"  # not an app (yet): e.g. a folder being copied in
            what = self._apply(app_id, None)
            self._report(app_id, what, None)
            return what
        signature = self._signature(app_id)
        if known is not None and signature == self._signatures.get(app_id):
            return "unchanged"
        spec, signature = self._read(folder, signature)
        self._signatures[app_id] = signature
        what = self._apply(app_id, spec)
        self._report(app_id, what, spec)
        return what

    def _read(self, folder: Path, signature: tuple) -> tuple[AppSpec, tuple]:
        """The app's spec and signature from two agreeing looks at the folder (a
        manifest being rewritten meanwhile is read again)."""
        spec = load_app(folder, self._workspaces)
        for _ in range(_READ_ATTEMPTS):
            after = self._signature(folder.name)
            if after == signature:
                break
            signature = after
            spec = load_app(folder, self._workspaces)
        return spec, signature

    def _signature(self, app_id: str) -> tuple:
        folder = self.apps_dir / app_id
        return folder_signature(folder, skip=_workdir_of(folder))

    def _report(self, app_id: str, what: str, spec: AppSpec | None) -> None:
        if what == "unchanged":
            return
        if spec is not None and not spec.ok:
            log.warning("app %s: %s", app_id, spec.error)
        else:
            log.info("app %s %s", app_id, what)
        try:
            self._on_change(app_id, what, spec)
        except Exception:
            log.exception("app change listener failed")
