"""The scheduler's files in the state folder, each written atomically.

- `jobs.json` — the definitions, `{"jobs": [...]}` with one job per line;
- `jobs-state.json` — the run state, `{"states": [...]}` with one job's state per line;
- `runs/<job_id>/<run_id>.json` — one file per run (started, finished, duration,
  status `ok`/`error`/`timeout`, summary, output tail).

A file that cannot be read is reported by name (`problems`), kept aside as
`<name>.corrupt-<time>` and never costs the other jobs: a damaged `jobs.json` or
`jobs-state.json` gives back every line that still reads as a valid entry (one
entry per line is what makes that possible); a damaged run file costs that one
record. A job without a readable state gets a fresh one (next run from now).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from aios_protocol.messages import ScheduleJob, ScheduleJobState, ScheduleRun
from aios_runtime.files import atomic_write_text, set_aside

__all__ = ["JobStore"]

log = logging.getLogger("aios.scheduler")

M = TypeVar("M", bound=BaseModel)
_RUN_ID = re.compile(r"^run_[A-Za-z0-9_]{6,64}$")
MAX_RUNS_KEPT = 200  # per job: older run files are removed


def _lines(key: str, entries: list[BaseModel]) -> str:
    body = ",\n".join(
        json.dumps(e.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
        for e in entries
    )
    return f'{{"{key}": [\n{body}\n]}}\n' if entries else f'{{"{key}": []}}\n'


class JobStore:
    """Reads and writes the scheduler's files under `folder` (the state folder)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.jobs_file = self.folder / "jobs.json"
        self.state_file = self.folder / "jobs-state.json"
        self.runs_dir = self.folder / "runs"
        self.problems: list[str] = []
        self._lock = threading.Lock()

    # -------------------------------------------------------------- reading

    def _report(self, path: Path, what: str, kept: int) -> None:
        """`path` set aside and named (`aios_runtime.files.set_aside`, the one rule),
        and kept in `problems` for the scheduler's own listing."""
        recovered = f"{kept} entr{'y' if kept == 1 else 'ies'} recovered"
        self.problems.append(set_aside(path, f"corrupt: {what}", then=recovered))

    def _read_entries(self, path: Path, key: str, model: type[M]) -> list[M]:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            self._report(path, f"unreadable: {exc}", 0)
            return []
        try:
            raw = json.loads(text)
            items = raw[key]
            if not isinstance(items, list):
                raise TypeError(f"{key} is not a list")
        except (ValueError, KeyError, TypeError) as exc:
            entries = self._recover(text, model)
            self._report(path, f"not valid JSON: {exc}", len(entries))
            return entries
        entries, bad = [], []
        for number, item in enumerate(items, 1):
            try:
                entries.append(model.model_validate(item))
            except ValidationError as exc:
                bad.append(f"entry {number}: {exc.errors()[0].get('msg', 'invalid')}")
        if bad:
            self._report(path, "; ".join(bad), len(entries))
            self._write(path, key, entries)  # the readable rest, in place of the aside copy
        return entries

    @staticmethod
    def _recover(text: str, model: type[M]) -> list[M]:
        """Every line that reads on its own as one valid entry."""
        found: list[M] = []
        for line in text.splitlines():
            line = line.strip().rstrip(",")
            if (
                not line.startswith("{")
                or line.startswith('{"jobs"')
                or line.startswith('{"states"')
            ):
                continue
            try:
                found.append(model.model_validate(json.loads(line)))
            except (ValueError, ValidationError):
                continue
        return found

    def load(self) -> tuple[dict[str, ScheduleJob], dict[str, ScheduleJobState]]:
        """The jobs and their states (states of unknown jobs dropped)."""
        with self._lock:
            jobs = {
                j.id: j
                for j in self._read_entries(self.jobs_file, "jobs", ScheduleJob)
                if j.id
            }
            states = {
                s.job_id: s
                for s in self._read_entries(self.state_file, "states", ScheduleJobState)
                if s.job_id in jobs
            }
        return jobs, states

    # -------------------------------------------------------------- writing

    def _write(self, path: Path, key: str, entries: list[Any]) -> None:
        atomic_write_text(path, _lines(key, entries), mode=0o600)

    def save(
        self, jobs: dict[str, ScheduleJob], states: dict[str, ScheduleJobState]
    ) -> None:
        with self._lock:
            self._write(self.jobs_file, "jobs", list(jobs.values()))
            self._write(self.state_file, "states", list(states.values()))

    def save_states(self, states: dict[str, ScheduleJobState]) -> None:
        with self._lock:
            self._write(self.state_file, "states", list(states.values()))

    # ----------------------------------------------------------------- runs

    def _run_path(self, job_id: str, run_id: str) -> Path:
        if not _RUN_ID.match(run_id):
            raise ValueError(f"bad run id {run_id!r}")
        return self.runs_dir / job_id / f"{run_id}.json"

    def write_run(self, run: ScheduleRun) -> None:
        path = self._run_path(run.job_id, run.run_id)
        atomic_write_text(path, json.dumps(run.model_dump(mode="json"), ensure_ascii=False))
        self._trim(path.parent)

    def _trim(self, folder: Path) -> None:
        files = sorted(folder.glob("run_*.json"))
        for old in files[: max(0, len(files) - MAX_RUNS_KEPT)]:
            old.unlink(missing_ok=True)

    def runs(self, job_id: str, limit: int = 50) -> list[ScheduleRun]:
        """The job's latest runs, newest first; a corrupt run file is reported and set aside."""
        folder = self.runs_dir / job_id
        found: list[ScheduleRun] = []
        for path in sorted(folder.glob("run_*.json"), reverse=True):
            if len(found) >= limit:
                break
            try:
                found.append(ScheduleRun.model_validate_json(path.read_bytes()))
            except (OSError, ValueError) as exc:
                self._report(path, f"{type(exc).__name__}", 0)
        return found

    def delete_runs(self, job_id: str) -> None:
        folder = self.runs_dir / job_id
        for path in folder.glob("*"):
            path.unlink(missing_ok=True)
        try:
            folder.rmdir()
        except OSError:
            pass
