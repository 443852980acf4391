"""The state folder of a running controller (`--state-dir`, default `~/.aios`).

What one launch leaves there for the CLI and the desktop: `ports.json` (the live
port map: service id → port), `token` (the per-launch API token, mode 600),
`controller.pid`; and what outlives launches: `sessions/` and the users' sandboxes,
`users/<user_id>/` (`aios_runtime.users`; the desktop's person is the owner,
`users/default/`). The executor keeps its own files beside them (`tool_calls/`,
its cache). Every write is atomic. `migrate_layout` moves what an older version
kept in the state folder's top level (`workspaces/<app_id>/`, `skills/`) into the
owner's sandbox, once, losing nothing.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from aios_runtime.files import atomic_write_text, set_aside
from aios_runtime.users import OWNER, user_skills_dir, workspaces_root

__all__ = ["StateDir", "default_state_dir"]


def default_state_dir() -> Path:
    """`$AIOS_STATE_DIR`, else `~/.aios`."""
    env = os.environ.get("AIOS_STATE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".aios"


@dataclass(frozen=True)
class StateDir:
    root: Path

    @property
    def ports_file(self) -> Path:
        return self.root / "ports.json"

    @property
    def token_file(self) -> Path:
        return self.root / "token"

    @property
    def pid_file(self) -> Path:
        return self.root / "controller.pid"

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    @property
    def cli_session_file(self) -> Path:
        return self.root / "cli_session"

    @property
    def workspaces_dir(self) -> Path:
        """The owner's app workdirs, `users/default/workspaces/`."""
        return workspaces_root(self.root, OWNER)

    @property
    def old_workspaces_dir(self) -> Path:
        """Where versions before the users' sandboxes kept the workdirs."""
        return self.root / "workspaces"

    @property
    def skills_dir(self) -> Path:
        """The owner's installed skills, the shared folder: `users/default/skills/`."""
        return user_skills_dir(self.root, OWNER)

    def create(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            os.chmod(self.root, 0o700)
        except OSError:
            pass
        self.migrate_layout()

    def migrate_layout(self) -> list[str]:
        """Move `workspaces/<app_id>/` and `skills/` of an older layout into the
        owner's sandbox.

        Each entry is renamed (same file system: nothing copied, nothing half-moved);
        one whose name the owner's folder already holds stays where it is, and is named
        in the answer (the notes of what was left). An emptied old folder is removed.
        """
        left = self._move_entries(self.old_workspaces_dir, self.workspaces_dir)
        return left + self._move_entries(self.root / "skills", self.skills_dir)

    @staticmethod
    def _move_entries(old: Path, new: Path) -> list[str]:
        if not old.is_dir() or old.is_symlink():
            return []
        new.parent.mkdir(parents=True, exist_ok=True)
        if not new.exists():
            os.rename(old, new)
            return []
        left: list[str] = []
        for entry in sorted(os.listdir(old)):
            target = new / entry
            if target.exists() or target.is_symlink():
                left.append(f"{old / entry} kept: {target} exists already")
                continue
            os.rename(old / entry, target)
        if not left:
            try:
                old.rmdir()
            except OSError:
                pass
        return left

    # ---------------------------------------------------------------- writing

    def write_launch(self, ports: dict[str, int], token: str, pid: int) -> None:
        """Record the live port map, the token (mode 600) and the controller pid."""
        self.create()
        atomic_write_text(self.token_file, token, mode=0o600)
        atomic_write_text(self.ports_file, json.dumps(ports, indent=2) + "\n")
        atomic_write_text(self.pid_file, f"{pid}\n")

    def write_ports(self, ports: dict[str, int]) -> None:
        atomic_write_text(self.ports_file, json.dumps(ports, indent=2) + "\n")

    def clear_launch(self, pid: int) -> None:
        """Remove the token and pid of the launch `pid` (if they are still its own)."""
        if self.read_pid() != pid:
            return
        for path in (self.token_file, self.pid_file):
            try:
                path.unlink()
            except FileNotFoundError:
                pass

    # ---------------------------------------------------------------- reading

    def read_pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def read_token(self) -> str | None:
        try:
            return self.token_file.read_text().strip() or None
        except OSError:
            return None

    def read_ports(self) -> dict[str, int]:
        """The live port map; {} when there is none. A damaged one is set aside and
        reported by name (the next launch writes it again)."""
        try:
            raw = json.loads(self.ports_file.read_text(encoding="utf-8"))
        except OSError:
            return {}
        except ValueError as exc:
            set_aside(self.ports_file, f"not valid JSON: {exc}")
            return {}
        if not isinstance(raw, dict):
            set_aside(self.ports_file, "not a JSON object")
            return {}
        return {k: v for k, v in raw.items() if isinstance(v, int)}

    def running_pid(self) -> int | None:
        """The pid of a live controller recorded here, or None."""
        pid = self.read_pid()
        if pid is None:
            return None
        import psutil

        try:
            proc = psutil.Process(pid)
            if proc.status() == psutil.STATUS_ZOMBIE:
                return None
            cmdline = " ".join(proc.cmdline())
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            return None
        return pid if ("controller" in cmdline or "aios" in cmdline) else None

    def controller_url(self) -> str | None:
        port = self.read_ports().get("controller")
        return f"http://127.0.0.1:{port}" if port else None
