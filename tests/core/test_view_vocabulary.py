"""One view vocabulary: every view type has its `data` shape (aios_protocol.views), a
builder (aios_sdk.views), a Markdown rendering (openai_entry.markdown, which the
`aios` command prints too) and a render function in the desktop's table
(desktop/web/views.js; `confirm` is added by confirm.js)."""

from __future__ import annotations

import re
from pathlib import Path

from aios.cli import render_result
from aios_protocol.messages import AppReply
from aios_protocol.views import SYSTEM_VIEW_TYPES, VIEW_SHAPES, VIEW_TYPES
from aios_sdk import views
from openai_entry.markdown import MARKDOWN_VIEWS, reply_markdown
from tests.view_samples import view_samples

WEB = Path(__file__).resolve().parents[2] / "desktop" / "web"


def desktop_view_types() -> set[str]:
    """The keys of views.js's `VIEWS` table, and the types other modules add to it."""
    source = (WEB / "views.js").read_text("utf-8")
    table = re.search(r"export const VIEWS = \{(.*?)\n\};", source, re.DOTALL)
    assert table, "views.js has no `export const VIEWS = {…};` table"
    found = set(re.findall(r"^\s*(\w+): render\w+,$", table.group(1), re.MULTILINE))
    for module in WEB.glob("*.js"):
        found |= set(re.findall(r"\bVIEWS\.(\w+) =", module.read_text("utf-8")))
    return found


def test_every_view_type_has_a_shape_a_builder_markdown_and_a_desktop_renderer() -> None:
    every = {*VIEW_TYPES, *SYSTEM_VIEW_TYPES}
    assert set(VIEW_SHAPES) == every
    assert set(views.BUILDERS) == set(VIEW_TYPES)  # `confirm` is the system's own
    assert set(MARKDOWN_VIEWS) == every
    assert desktop_view_types() == every


def test_the_cli_prints_each_reply_as_its_markdown() -> None:
    samples = view_samples()
    response = {
        "message": "完成",
        "tasks": [
            {
                "task_id": f"t{i}",
                "app_id": "gallery_app",
                "instruction": view_type,
                "status": "done",
                "result": {**body, "actions": [views.button("播放", "play")]},
            }
            for i, (view_type, body) in enumerate(samples.items(), start=1)
        ]
        + [{"task_id": "t99", "app_id": "x", "instruction": "…", "status": "pending"}],
    }
    printed = render_result(response, "http://h/").splitlines()
    assert printed[0] == "完成"
    for i, (view_type, body) in enumerate(samples.items(), start=1):
        start = printed.index(f"[t{i}] gallery_app (done): {view_type}")
        markdown = reply_markdown(AppReply.model_validate(body), "gallery_app", "http://h/")
        shown = [f"  {line}".rstrip() for line in markdown.splitlines()]
        assert printed[start + 1 : start + 1 + len(shown)] == shown, view_type
        assert printed[start + 1 + len(shown)] == "  actions: 播放"
    assert printed[-1] == "[t99] x (pending): …"
