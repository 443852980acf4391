"""The desktop's layout, kept for its user: `<state_dir>/users/<user_id>/layout.json`.

What UI commands changed on the desktop (a blue wallpaper, a hidden taskbar, a
moved control) and the history of those changes that undo walks back through
(`aios_protocol.messages.DesktopLayout`). The desktop page reads it when it starts
and writes it after every change, so a new browser, or another one, shows the same
layout; it lasts until the user resets the layout (an empty one is written). The
desktop's person is the owner; the file is read by `read_state`, so a damaged one
is set aside and named, and the desktop starts from its own look.
"""

from __future__ import annotations

import threading
from pathlib import Path

from aios_protocol.messages import DesktopLayout
from aios_runtime.files import atomic_write_text, read_state
from aios_runtime.users import OWNER, user_root

__all__ = ["LAYOUT_FILE", "LayoutStore"]

LAYOUT_FILE = "layout.json"


def _parse_layout(text: str) -> DesktopLayout:
    return DesktopLayout.model_validate_json(text)


class LayoutStore:
    """The layout of one user's desktop (the owner's unless told otherwise)."""

    def __init__(self, state_root: Path, user_id: str = OWNER):
        self.path = user_root(state_root, user_id) / LAYOUT_FILE
        self._lock = threading.Lock()

    def get(self) -> DesktopLayout:
        """The layout saved last; an empty one when none was, or it was damaged."""
        with self._lock:
            saved = read_state(self.path, _parse_layout, "a desktop layout")
        return saved or DesktopLayout()

    def put(self, layout: DesktopLayout) -> None:
        """Keep `layout` in place of the one saved (atomically)."""
        text = layout.model_dump_json(exclude_none=True)
        with self._lock:
            atomic_write_text(self.path, text + "\n", 0o600)
