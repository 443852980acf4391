"""Debian's Chromium for Playwright (never `playwright install`, which downloads a
browser of its own): where each build lies and the flags it is started with, for the
bench and the tests alike.

The tests drive the headless build (package chromium-headless-shell: the same Blink,
version and flags as /usr/bin/chromium, and what Playwright's own headless runs use),
which draws a page for half the CPU of the full browser in headless mode. The bench
drives the full browser, since it measures what a person feels.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CHROMIUM_ARGS", "FULL_CHROMIUM", "HEADLESS_CHROMIUM"]

HEADLESS_CHROMIUM = Path("/usr/bin/chromium-headless-shell")
FULL_CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
