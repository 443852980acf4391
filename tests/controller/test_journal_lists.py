"""The session journal under arbitrary edits of its append-only lists (S-42).

A save journals a list as "entries dropped at the front, entries added at the
end" when that is what happened, and writes a snapshot otherwise. Random edits —
appends, front trims, the same entry object twice, inserts, swaps, a new list —
must always read back from the real file exactly as the session holds them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from controller.sessions import SessionStore, load_session_file


def _dumped(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _edit(
    log: list[dict[str, Any]], rnd: random.Random, pool: list[dict[str, Any]]
) -> None:
    """One random in-place edit of `log` (the list object stays the same)."""
    kind = rnd.randrange(6)
    if kind == 0:  # what the pipeline does: trim the front, append at the end
        del log[: rnd.randint(0, 3)]
        log.extend(rnd.choice(pool) for _ in range(rnd.randint(0, 3)))
    elif kind == 1 and log:  # the same entry object appended again
        log.append(log[rnd.randrange(len(log))])
    elif kind == 2 and log:
        log.insert(rnd.randrange(len(log)), rnd.choice(pool))
    elif kind == 3 and log:
        log[rnd.randrange(len(log))] = rnd.choice(pool)
    elif kind == 4:
        log[:] = [rnd.choice(pool) for _ in range(rnd.randint(0, 5))]
    else:
        log.append(rnd.choice(pool))


def test_random_list_edits_read_back_exactly(tmp_path: Path) -> None:
    rnd = random.Random(20240601)
    pool = [{"tool": "file_read", "n": i} for i in range(12)]
    store = SessionStore(tmp_path)
    session = store.get_or_create(None)
    path = tmp_path / f"{session.session_id}.json"
    deltas = 0
    for _ in range(300):
        _edit(session.tool_calls_log, rnd, pool)
        if rnd.random() < 0.3:
            _edit(session.history, rnd, pool)
        store.save(session)
        lines = path.read_text(encoding="utf-8").rstrip("\n").split("\n")
        deltas += len(lines) > 1
        saved = load_session_file(path)
        assert saved["tool_calls_log"] == _dumped(session.tool_calls_log)
        assert saved["history"] == _dumped(session.history)
    assert deltas > 100  # most edits were journalled as deltas, not snapshots
