"""Smoke test of the real desktop window: `python desktop/desktop_app.py` (the whole
system, like `aios start`, window included) under a private Xvfb display, with the
pywebview backend scripts/install.sh installs. The screen is captured with
ImageMagick's `import` until the page has drawn: the gradient (many colours) and the
taskbar's green status dots, which exist only after the page's scripts loaded the
apps from the controller and connected to its event stream.
"""

from __future__ import annotations

import copy
import json
import os
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from desktop.window import WindowUnavailable, choose_backend
from tests.controller.system import TEST_CONFIG
from tests.desktop.conftest import ARTIFACTS
from tests.procs import PYTHON, ROOT, stop

pytestmark = [pytest.mark.slow]

WIDTH, HEIGHT, TASKBAR = 1280, 800, 52


def read_ppm(path: Path) -> tuple[int, int, bytes]:
    """Width, height and RGB bytes of a binary PPM (P6, maxval 255)."""
    data = path.read_bytes()
    fields: list[bytes] = []
    pos = 0
    while len(fields) < 4:
        while data[pos : pos + 1].isspace():
            pos += 1
        if data[pos : pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while not data[end : end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    assert fields[0] == b"P6" and fields[3] == b"255", fields
    width, height = int(fields[1]), int(fields[2])
    return width, height, data[pos + 1 : pos + 1 + width * height * 3]


def analyse(path: Path) -> dict[str, int]:
    width, height, rgb = read_ppm(path)
    pixels = [rgb[i : i + 3] for i in range(0, len(rgb), 3)]
    strip = pixels[(height - TASKBAR) * width :]
    green = sum(1 for r, g, b in strip if g > 150 and r < 110 and b < 150)
    desk = pixels[: (height - TASKBAR) * width]
    white = sum(1 for r, g, b in desk if r > 240 and g > 240 and b > 240)
    return {
        "colours": len(set(pixels)),
        "green_in_taskbar": green,
        "white_on_desktop": white,
    }


def grab(display: str, path: Path) -> None:
    """The whole virtual screen into `path` (8 bits per channel)."""
    subprocess.run(
        ["import", "-display", display, "-window", "root", "-depth", "8", str(path)],
        check=True,
        timeout=30,
    )


def wait_for_screen(display: str, path: Path, done, seconds: float) -> dict[str, int]:
    """Capture and analyse the screen until `done(found)` or the deadline."""
    deadline = time.monotonic() + seconds
    while True:
        grab(display, path)
        found = analyse(path)
        if done(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def start_xvfb() -> tuple[subprocess.Popen, str]:
    xvfb = subprocess.Popen(
        [
            "Xvfb",
            "-displayfd",
            "1",
            "-screen",
            "0",
            f"{WIDTH}x{HEIGHT}x24",
            "-nolisten",
            "tcp",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert xvfb.stdout is not None
    number = xvfb.stdout.readline().decode().strip()
    if not number.isdigit():
        xvfb.kill()
        pytest.skip(f"Xvfb did not start (said {number!r})")
    return xvfb, f":{number}"


def test_real_window_shows_the_desktop(tmp_path: Path) -> None:
    for tool in ("Xvfb", "import", "xdotool"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed (scripts/install.sh --test)")
    try:
        backend = choose_backend()
    except WindowUnavailable as exc:
        pytest.skip(f"no pywebview backend here: {exc}")
    apps = tmp_path / "apps"
    shutil.copytree(ROOT / "apps" / "hello_app", apps / "hello_app")
    config = tmp_path / "config.json"
    config.write_text(json.dumps(copy.deepcopy(TEST_CONFIG)))
    log = tmp_path / "desktop_app.log"
    xvfb, display = start_xvfb()
    proc = None
    try:
        env = {**os.environ, "DISPLAY": display, "PYTHONUNBUFFERED": "1"}
        env.pop("WAYLAND_DISPLAY", None)
        env.pop("AIOS_STATE_DIR", None)
        with open(log, "wb") as err:
            proc = subprocess.Popen(
                [
                    PYTHON,
                    str(ROOT / "desktop" / "desktop_app.py"),
                    "--ports",
                    "auto",
                    "--state-dir",
                    str(tmp_path / "state"),
                    "--apps-dir",
                    str(apps),
                    "--config",
                    str(config),
                ],
                cwd=tmp_path,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                start_new_session=True,
            )
        lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(
            target=lambda: [lines.put(line) for line in proc.stdout], daemon=True
        ).start()
        try:
            ready = lines.get(timeout=60).decode()
        except queue.Empty:
            ready = ""
        assert ready.startswith("ready http://127.0.0.1:"), log.read_text()[-2000:]

        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        capture = tmp_path / "screen.ppm"
        found = wait_for_screen(
            display,
            capture,
            lambda f: (
                (f["colours"] >= 200 and f["green_in_taskbar"] >= 10)
                or proc.poll() is not None
            ),
            90,
        )
        assert proc.poll() is None, f"the system exited: {log.read_text()[-2000:]}"
        assert found["colours"] >= 200, f"window looks blank: {found} ({backend})"
        assert found["green_in_taskbar"] >= 10, (
            f"taskbar never showed running apps: {found}"
        )

        # A real click on the first taskbar icon (hello_app, right of the start button)
        # opens its window: the page's requests work inside the native web view too.
        before = found["white_on_desktop"]
        subprocess.run(
            ["xdotool", "mousemove", "124", str(HEIGHT - TASKBAR // 2), "click", "1"],
            env={**os.environ, "DISPLAY": display},
            check=True,
            timeout=30,
        )
        found = wait_for_screen(
            display, capture, lambda f: f["white_on_desktop"] > before + 50_000, 30
        )
        grab(display, ARTIFACTS / "real-window.png")
        assert found["white_on_desktop"] > before + 50_000, f"no window opened: {found}"
    finally:
        if proc is not None:
            stop(proc)  # its apps die with it; WebKit helpers share its group
        xvfb.kill()
        xvfb.wait(5)
