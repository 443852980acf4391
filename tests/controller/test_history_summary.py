"""`history_summary` read incrementally (`IncrementalSummaries`): always the text
`deterministic_summary` gives for the whole history, while a session's history
grows, loses turns at the front (MAX_HISTORY), or is replaced; and the context
builder's default summary is the same as `summarise_history`."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from controller.context import ContextBuilder, summarise_history
from controller.llm_summary import IncrementalSummaries, deterministic_summary
from controller.sessions import MAX_HISTORY, Session

WORDS = [
    "播放周杰伦的歌",
    "bench probe",
    "  打开   代码\n窗口 ",
    "x" * 60,
    "",
    "你好",
    "下一首",
]
KINDS = ["instruction", "instruction", "open", "action", None, ""]


def _turn(rnd: random.Random) -> dict[str, Any]:
    return {"kind": rnd.choice(KINDS), "text": rnd.choice(WORDS)}


def test_same_text_as_reading_the_whole_history_under_random_changes() -> None:
    rnd = random.Random(11)
    summaries = IncrementalSummaries()
    for trial in range(60):
        history: list[Any] = []
        key = f"s{trial % 3}"  # keys shared across histories: a new history is stale
        for _ in range(rnd.randint(1, 150)):
            change = rnd.random()
            if change < 0.7:
                for _ in range(rnd.randint(1, 3)):
                    history.append(_turn(rnd))
                del history[:-MAX_HISTORY]
            elif change < 0.8:
                del history[: rnd.randint(1, 5)]
            elif change < 0.85 and history:
                history[rnd.randrange(len(history))] = _turn(rnd)  # an edit: seen
            elif change < 0.9:
                history.insert(rnd.randint(0, len(history)), _turn(rnd))
            elif change < 0.93:
                history = [dict(turn) for turn in history]  # same words, new turns
            assert summaries.summary(key, history) == deterministic_summary(history)


def test_a_long_session_reads_only_its_new_turns() -> None:
    summaries = IncrementalSummaries()
    history: list[Any] = []
    reads: list[int] = []
    for i in range(300):
        history.append({"kind": "instruction", "text": f"第 {i} 个问题"})
        del history[:-MAX_HISTORY]
        text = summaries.summary("s", history)
        assert text == deterministic_summary(history)
        reading = summaries._readings["s"]
        reads.append(len(reading.quotes))
    assert max(reads) < 30  # the summary's own instructions, not the whole history


def test_the_builders_default_summary_is_summarise_history(tmp_path: Path) -> None:
    builder = ContextBuilder(lambda app_id: ["file_read"])
    session = Session(session_id="sess_summary1")
    for i in range(40):
        session.add_turn("instruction" if i % 3 else "open", f"问题 {i}")
        context = builder.build(app_id="a", role="", workdir=tmp_path, session=session)
        assert context.history_summary == summarise_history(session)
    session.context["llm_summary"] = "用户在听周杰伦"
    session.add_turn("instruction", "再来一首")
    context = builder.build(app_id="a", role="", workdir=tmp_path, session=session)
    assert context.history_summary == "用户在听周杰伦" == summarise_history(session)
