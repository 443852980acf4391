"""The desktop's native window: pywebview showing the controller's desktop page.

`run_window(url)` opens one window on the page `aios start` serves (the URL carries
the per-launch `?token=`) and blocks until the user closes it. The backend is GTK
(WebKitGTK through PyGObject; `scripts/install.sh` installs it) when it imports,
else Qt (`pip install 'pywebview[qt]'`); `AIOS_WEBVIEW_GUI=gtk|qt` forces one.
pywebview is imported only inside `run_window`, so importing this module never
fails: a missing backend surfaces as `WindowUnavailable` with the reason, which the
CLI reports before falling back to headless.

    python -m desktop.window URL    # show an already running desktop in a window
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Mapping, MutableMapping

__all__ = ["WindowUnavailable", "choose_backend", "prepare_environment", "run_window"]

DEFAULT_SIZE = (1280, 800)
MIN_SIZE = (900, 600)


class WindowUnavailable(RuntimeError):
    """No usable pywebview backend (or no pywebview at all) on this machine."""


def _gtk_works() -> bool:
    try:
        gi = importlib.import_module("gi")
        gi.require_version("Gtk", "3.0")
        try:
            gi.require_version("WebKit2", "4.1")
        except ValueError:
            gi.require_version("WebKit2", "4.0")
        importlib.import_module("gi.repository.WebKit2")
    except (ImportError, ValueError):
        return False
    return True


def _qt_works() -> bool:
    try:
        importlib.import_module("qtpy")
        importlib.import_module("qtpy.QtWebEngineWidgets")
    except Exception:  # qtpy raises its own errors when no binding is installed
        return False
    return True


def choose_backend(env: Mapping[str, str] | None = None) -> str:
    """ "gtk" or "qt": the forced one (AIOS_WEBVIEW_GUI), else the first that imports."""
    env = os.environ if env is None else env
    forced = (env.get("AIOS_WEBVIEW_GUI") or "").strip().lower()
    if forced:
        if forced not in ("gtk", "qt"):
            raise WindowUnavailable(f"AIOS_WEBVIEW_GUI={forced!r}: use 'gtk' or 'qt'")
        return forced
    if _gtk_works():
        return "gtk"
    if _qt_works():
        return "qt"
    raise WindowUnavailable(
        "no pywebview backend: install the GTK one with scripts/install.sh "
        "(gir1.2-webkit2-4.1 + PyGObject<3.51) or `pip install 'pywebview[qt]'`"
    )


def prepare_environment(gui: str, env: MutableMapping[str, str] | None = None) -> None:
    """Environment the backend needs; Qt's Chromium refuses to run as root sandboxed."""
    env = os.environ if env is None else env
    if gui == "qt" and hasattr(os, "geteuid") and os.geteuid() == 0:
        flags = env.get("QTWEBENGINE_CHROMIUM_FLAGS", "")
        if "--no-sandbox" not in flags.split():
            env["QTWEBENGINE_CHROMIUM_FLAGS"] = f"{flags} --no-sandbox".strip()


def run_window(
    url: str,
    title: str = "Triton AIOS",
    *,
    size: tuple[int, int] = DEFAULT_SIZE,
    on_shown: Callable[[], None] | None = None,
) -> None:
    """Show `url` in a native window; return when the window is closed.

    Must run on the main thread (GTK and Qt both insist). `on_shown` runs in a
    background thread once the GUI loop started (used by the smoke test).
    """
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise WindowUnavailable("no display (DISPLAY / WAYLAND_DISPLAY unset)")
    try:
        webview = importlib.import_module("webview")
    except ImportError as exc:
        raise WindowUnavailable(f"pywebview is not installed ({exc})") from exc
    gui = choose_backend()
    prepare_environment(gui)
    webview.create_window(
        title,
        url,
        width=size[0],
        height=size[1],
        min_size=MIN_SIZE,
        text_select=True,
        background_color="#0b1e4a",
    )
    webview.start(on_shown, gui=gui, private_mode=True)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m desktop.window URL", file=sys.stderr)
        return 2
    try:
        run_window(args[0])
    except WindowUnavailable as exc:
        print(f"desktop window: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
