"""`aios bench`'s figures of opening apps: cold and warm opens, the memory of running
apps, the hello instruction against the health hop, and the same seen in Chromium.

- `open_times` opens every app of a fresh system once (each is stopped: apps start
  on first use) and then again `rounds` times: the first open of a stopped app and
  the open of a warm one, per app, in milliseconds through the API
  (`POST /api/apps/<id>/open`, the desktop's own call).
- `tree_memory` is the resident memory of the system's whole process tree, per
  process (labelled by app, through `/api/apps`' pids): RSS, PSS (each shared page
  divided among the processes sharing it) and USS (the pages only that process
  holds). Apps forked from the app template share its pages, so their RSS counts
  the template's imports once per app while PSS counts them once in all: the sum of
  PSS is what the tree costs the machine, and the memory goal is on it.
- `hello_ratio` alternates the hello instruction (`/api/instruction` routed to the
  warm hello app, which reads its greeting with one `file_read` step) and
  `GET /api/health` on one keep-alive connection: the median of the first over the
  median of the second, in the same run.
- `browser_times` drives the desktop in Chromium (1280×800): a taskbar click on a
  stopped app until its window holds the app's view (no longer the loading one),
  and Enter in the command bar until the warm hello app's reply is in its window.
  Both end when the content is in the page (a DOM mutation), before the paint, and
  each begins on a still desktop (no animation running: the previous reply's toast
  has slid in), as a person clicks or types again.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from bench.hop import KeepAliveClient

__all__ = ["browser_times", "hello_ratio", "open_times", "tree_memory"]

HELLO_TEXT = "你好 bench"


def open_times(
    client: KeepAliveClient, app_ids: list[str], rounds: int
) -> tuple[dict[str, float], dict[str, float]]:
    """({app: first open ms}, {app: median warm open ms}); each app opened once
    cold, then `rounds` times warm."""
    cold: dict[str, float] = {}
    warm: dict[str, list[float]] = {app_id: [] for app_id in app_ids}
    for app_id in app_ids:
        cold[app_id] = _open_ms(client, app_id)
    for _ in range(rounds):
        for app_id in app_ids:
            warm[app_id].append(_open_ms(client, app_id))
    return cold, {app_id: statistics.median(times) for app_id, times in warm.items()}


def _open_ms(client: KeepAliveClient, app_id: str) -> float:
    started = time.perf_counter()
    status, reply = client.post(f"/api/apps/{app_id}/open", {})
    took = (time.perf_counter() - started) * 1000
    if status != 200 or not isinstance(reply, dict):
        raise RuntimeError(f"opening {app_id} failed (HTTP {status}: {reply})")
    if reply.get("status") == "error":  # the app's error view: not an open
        raise RuntimeError(f"opening {app_id} answered an error: {reply.get('data')}")
    return took


def _labels(root_pid: int, apps: list[dict[str, Any]]) -> dict[int, str]:
    """pid → what it is: the controller, the executor, the app template, an app
    (its own process and the ones confining it, up to the controller's child)."""
    import psutil

    labels: dict[int, str] = {root_pid: "controller"}
    for app in apps:
        pid = app.get("pid")
        if not pid:
            continue
        try:
            proc = psutil.Process(pid)
            while True:
                parent = proc.parent()
                if parent is None:
                    break
                if parent.pid == root_pid:  # bubblewrap's, or the template itself
                    if "aios_sdk.zygote" not in " ".join(proc.cmdline()):
                        labels.setdefault(proc.pid, str(app["id"]))
                    break
                labels.setdefault(proc.pid, str(app["id"]))
                proc = parent
        except psutil.Error:
            continue
    return labels


def tree_memory(root_pid: int, apps: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """{label: {"rss", "pss", "uss"}} in MiB over the tree below `root_pid` (see the
    module docstring); a process that ended meanwhile is left out."""
    import psutil

    labels = _labels(root_pid, apps)
    root = psutil.Process(root_pid)
    sizes: dict[str, dict[str, float]] = {}
    for proc in [root, *root.children(recursive=True)]:
        try:
            label = labels.get(proc.pid) or _label_of(proc)
            info = proc.memory_full_info()
        except psutil.Error:
            continue
        row = sizes.setdefault(label, {"rss": 0.0, "pss": 0.0, "uss": 0.0})
        row["rss"] += info.rss / 2**20
        row["pss"] += getattr(info, "pss", info.uss) / 2**20
        row["uss"] += info.uss / 2**20
    return sizes


def _label_of(proc: Any) -> str:
    args = " ".join(proc.cmdline())
    if "aios_sdk.zygote" in args:
        return "app template"
    if "-m executor" in args:
        return "executor"
    return f"other ({proc.name()})"


def hello_ratio(
    client: KeepAliveClient, samples: int, warmup: int
) -> tuple[float, float, float]:
    """(hello p50 ms, health p50 ms, their ratio), alternating on one connection."""
    hellos: list[float] = []
    healths: list[float] = []
    body: dict[str, Any] = {"text": HELLO_TEXT}
    for i in range(warmup + samples):
        started = time.perf_counter()
        status, _ = client.get("/api/health")
        health = time.perf_counter() - started
        if status != 200:
            raise RuntimeError(f"/api/health answered HTTP {status}")
        started = time.perf_counter()
        status, answer = client.post("/api/instruction", body)
        hello = time.perf_counter() - started
        tasks = (answer or {}).get("tasks") or []
        if status != 200 or [t.get("app_id") for t in tasks] != ["hello_app"]:
            raise RuntimeError(f"the hello instruction went wrong (HTTP {status})")
        if tasks[0].get("status") != "done":
            raise RuntimeError(f"the hello instruction ended {tasks[0].get('status')}")
        body["session_id"] = answer["session_id"]
        if i >= warmup:
            hellos.append(hello * 1000)
            healths.append(health * 1000)
    hello_p50, health_p50 = statistics.median(hellos), statistics.median(healths)
    return hello_p50, health_p50, hello_p50 / health_p50


# In the page: click the app's taskbar icon, resolve with the milliseconds until its
# window holds a view that is not the loading one.
_CLICK_JS = """
(appId) => new Promise((resolve) => {
  const done = () => {
    const win = document.getElementById(`win_${appId}`);
    const type = win && win.dataset.viewType;
    return Boolean(type) && type !== "loading";
  };
  const started = performance.now();
  const watch = new MutationObserver(() => {
    if (done()) { watch.disconnect(); resolve(performance.now() - started); }
  });
  watch.observe(document.body, { subtree: true, childList: true, attributes: true });
  document.getElementById(`task_${appId}`).click();
})
"""

# In the page: type `text` in the command bar and press Enter (the form's submit),
# resolve with the milliseconds until the hello window shows its reply; fail after
# 30 s without one (a bench that waits forever measures nothing).
_ENTER_JS = """
(text) => new Promise((resolve, reject) => {
  // the reply is the window's next text view (each reply is drawn anew): the one on
  // screen now is marked, whatever it says (the app greets, whatever was typed)
  const win = () => document.getElementById("win_hello_app");
  for (const old of win()?.querySelectorAll(".v-text") || []) old.dataset.benchSeen = "1";
  const done = () => Boolean(win()?.querySelector(".v-text:not([data-bench-seen])"));
  const input = document.getElementById("command_input");
  input.value = text;
  const started = performance.now();
  const watch = new MutationObserver(() => {
    if (done()) { watch.disconnect(); resolve(performance.now() - started); }
  });
  watch.observe(document.body, { subtree: true, childList: true, characterData: true });
  setTimeout(() => { watch.disconnect(); reject(new Error("no reply within 30 s")); }, 30000);
  input.form.requestSubmit();
})
"""


# In the page: resolve once nothing has moved for two frames in a row (the last
# reply's toast has slid in, a window's status dot has stopped pulsing), or after 2 s.
_SETTLE_JS = """
() => new Promise((resolve) => {
  const until = performance.now() + 2000;
  let still = 0;
  const frame = () => {
    const moving = document.getAnimations().some((a) => a.playState === "running");
    still = moving ? 0 : still + 1;
    if (still >= 2 || performance.now() > until) resolve(); else requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
})
"""


def _settle(page: Any) -> None:
    """Wait until the desktop is still, as a person finds it when they click or
    press Enter again: each sample then measures its own work, not the frames left
    of the one before it."""
    page.evaluate(_SETTLE_JS)


def browser_times(
    url: str, token: str, stopped_apps: list[str], enters: int
) -> tuple[dict[str, float], list[float]]:
    """({app: taskbar click → content ms} for each stopped app, [Enter → hello's
    reply ms]) in Chromium; RuntimeError when Chromium cannot be driven here."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise RuntimeError("playwright is not installed") from exc
    from bench.browser import CHROMIUM_ARGS, FULL_CHROMIUM

    if not FULL_CHROMIUM.exists():
        raise RuntimeError(f"no Chromium at {FULL_CHROMIUM}")
    clicks: dict[str, float] = {}
    replies: list[float] = []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=str(FULL_CHROMIUM), args=CHROMIUM_ARGS
        )
        try:
            context = browser.new_context(
                viewport={"width": 1280, "height": 800}, locale="zh-CN"
            )
            page = context.new_page()
            page.set_default_timeout(30000)
            page.goto(f"{url}/?token={token}")
            for app_id in stopped_apps:
                page.wait_for_selector(f"#task_{app_id}")
            for app_id in stopped_apps:
                _settle(page)
                clicks[app_id] = float(page.evaluate(_CLICK_JS, app_id))
            page.click("#task_hello_app")  # hello's window, warm, for the replies
            page.wait_for_selector("#win_hello_app .v-text")
            for i in range(enters + 3):
                _settle(page)
                took = float(page.evaluate(_ENTER_JS, f"你好 {i}"))
                if i >= 3:  # the first ones warm the page's code up
                    replies.append(took)
            context.close()
        finally:
            browser.close()
    return clicks, replies
