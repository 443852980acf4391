"""The `aios` command (`python -m aios …` is the same thing).

    aios start [--headless|--browser] [--config F] [--apps-dir D] [--state-dir S]
               [--ports auto|F]
    aios say "…" [--json] [--session S]
    aios apps [--json]
    aios stop
    aios new-app NAME [--apps-dir D] [--name "Display name"]
    aios install PATH [--apps-dir D]   (a folder or a .zip; the running system's
                                        apps folder when one runs)
    aios uninstall APP_ID [--delete-workspace] [--apps-dir D]
    aios mcp --app APP_ID [--user U] [--apps-dir D] [--config F] [--state-dir S]  (docs/MCP.md)
    aios bench [--quick] [--json]  (speed and memory against their goals)
    aios bench --soak MINUTES [--json]  (growth of fds, threads, RSS)

`aios start` prints exactly one line on stdout, `ready <desktop url with ?token=>`,
once every service is healthy, then runs until SIGINT/SIGTERM (or until the desktop
window closes). Everything else it says goes to stderr. The other commands find the
running controller through the state folder (`--state-dir`, `$AIOS_STATE_DIR`,
`~/.aios`): its `ports.json`, `token` and `controller.pid`.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, NoReturn

from aios_runtime import shipped
from controller.state_dir import StateDir, default_state_dir

__all__ = ["main", "render_result"]

# seconds a stop may take (the apps' grace is 2 s) before its threads' stacks are
# written to stderr and the process ends anyway
STOP_DEADLINE = 10.0


def _err(text: str) -> None:
    print(f"aios: {text}", file=sys.stderr, flush=True)


def _has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


# ---------------------------------------------------------------------- start


def cmd_start(args: argparse.Namespace) -> int:
    import logging

    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="aios %(name)s: %(message)s",
        stream=sys.stderr,
    )
    from aios.system import Controller, LaunchOptions
    from aios_protocol.errors import AiosError

    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    controller = Controller(
        LaunchOptions(
            config_path=Path(args.config),
            apps_dir=Path(args.apps_dir),
            state_dir=Path(args.state_dir) if args.state_dir else default_state_dir(),
            ports=args.ports,
            speak=not args.headless,
        )
    )
    try:
        url = controller.start()
    except AiosError as exc:
        _err(f"could not start: {exc.message}")
        return 1
    except Exception as exc:
        _err(f"could not start: {type(exc).__name__}: {exc}")
        return 1
    print(f"ready {url}", flush=True)
    try:
        if not stop.is_set():
            _run_front_end(args, url, stop)
    finally:
        # a stop that hangs prints every thread's stack to the log and ends anyway
        faulthandler.dump_traceback_later(STOP_DEADLINE, exit=True)
        controller.stop()
    _leave_at_once(0)


def _leave_at_once(code: int) -> NoReturn:
    """End the process once the controller has stopped everything it started and
    written its files, without the interpreter's teardown of every module and object:
    with the controller's many threads and large heap that teardown took a second or
    more on a busy machine, which every stop (`aios stop`, a signal) waited for."""
    import logging

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _run_front_end(args: argparse.Namespace, url: str, stop: threading.Event) -> None:
    """Headless: wait for a signal. Browser: open a tab if possible. Default: window."""
    if args.browser:
        if _has_display():
            import webbrowser

            try:
                webbrowser.open(url)
            except Exception as exc:
                _err(f"could not open a browser ({exc}); open {url} yourself")
        stop.wait()
        return
    if args.headless:
        stop.wait()
        return
    if not _has_display():
        _err("no display: running headless (open the ready URL in a browser)")
        stop.wait()
        return
    try:
        from desktop.window import run_window
    except ImportError as exc:
        _err(f"desktop window not available ({exc}): running headless")
        stop.wait()
        return
    # a signal while the window's main loop runs: stop from a helper thread
    threading.Thread(target=_exit_on, args=(stop,), daemon=True).start()
    try:
        run_window(url)
    except Exception as exc:
        _err(f"desktop window failed ({type(exc).__name__}: {exc}): running headless")
        stop.wait()


def _exit_on(stop: threading.Event) -> None:
    stop.wait()
    time.sleep(0.5)  # let the main thread shut down cleanly if it can
    os._exit(0)


# ------------------------------------------------------------ client commands


class _Running:
    """The running controller as recorded in the state folder."""

    def __init__(self, state_dir: str | None):
        self.state = StateDir(Path(state_dir) if state_dir else default_state_dir())
        self.url = self.state.controller_url()
        self.token = self.state.read_token()

    def check(self) -> bool:
        if not self.url or not self.token or self.state.running_pid() is None:
            _err(
                f"no running controller recorded in {self.state.root} "
                "(start one with `aios start`)"
            )
            return False
        return True

    def call(self, method: str, path: str, body: Any = None, timeout: float = 300) -> Any:
        from controller.clients import json_call

        assert self.url is not None
        return json_call(
            method,
            self.url + path,
            body,
            token=self.token,
            timeout=timeout,
            what="the controller",
        )


def render_result(response: dict[str, Any], base_url: str = "") -> str:
    """An `InstructionResponse` as text for the terminal: each task's reply as the
    Markdown the `/v1` entry answers with (`openai_entry.markdown`), then the labels
    of its controls. Workspace paths become file URLs under `base_url`."""
    from pydantic import ValidationError

    from aios_protocol.messages import AppReply
    from openai_entry.markdown import reply_markdown

    lines = []
    if response.get("message"):
        lines.append(str(response["message"]))
    for task in response.get("tasks") or []:
        deps = task.get("depends_on") or []
        after = f" after {', '.join(deps)}" if deps else ""
        lines.append(
            f"[{task.get('task_id')}] {task.get('app_id')} ({task.get('status')}){after}: "
            f"{task.get('instruction')}"
        )
        try:
            reply = AppReply.model_validate(task.get("result"))
        except ValidationError:
            continue  # no reply (yet): the line above says the task's status
        shown = reply_markdown(reply, str(task.get("app_id") or ""), base_url)
        lines.extend(f"  {line}".rstrip() for line in shown.splitlines())
        labels = [action.label or action.action_id for action in reply.actions]
        if labels:
            lines.append("  actions: " + ", ".join(labels))
    return "\n".join(lines)


def cmd_say(args: argparse.Namespace) -> int:
    from aios_protocol.errors import AiosError

    running = _Running(args.state_dir)
    if not running.check():
        return 1
    session = args.session
    if session is None:
        try:
            session = running.state.cli_session_file.read_text().strip() or None
        except OSError:
            session = None
    if not args.text and not args.audio:
        _err("say what? give the instruction text, or --audio FILE.wav")
        return 2
    body: dict[str, Any] = {"text": args.text, "source": "text"}
    if session:
        body["session_id"] = session
    try:
        if args.audio:
            from voice.input import post_voice_file

            assert running.url is not None and running.token is not None  # check() held
            response = post_voice_file(
                running.url, running.token, args.audio, lang=args.lang, session_id=session
            )
            _err("🎤 " + str(response.get("transcript", "")))
        else:
            response = running.call("POST", "/api/instruction", body)
    except AiosError as exc:
        _err(exc.message)
        return 1
    if response.get("session_id"):
        from aios_runtime.files import atomic_write_text

        atomic_write_text(running.state.cli_session_file, response["session_id"])
    if args.json:
        print(json.dumps(response, ensure_ascii=False, indent=2))
    else:
        print(render_result(response, running.url or ""))
    failed = [t for t in response.get("tasks") or [] if t.get("status") == "error"]
    return 1 if failed else 0


def cmd_apps(args: argparse.Namespace) -> int:
    from aios_protocol.errors import AiosError

    running = _Running(args.state_dir)
    if not running.check():
        return 1
    try:
        apps = running.call("GET", "/api/apps", timeout=10)
    except AiosError as exc:
        _err(exc.message)
        return 1
    if args.json:
        print(json.dumps(apps, ensure_ascii=False, indent=2))
        return 0
    try:
        language = str(
            running.call("GET", "/api/settings", timeout=10).get("ui_language") or ""
        )
    except AiosError:
        language = ""
    print(apps_table(apps, language))
    return 0


def apps_table(apps: list[dict[str, Any]], language: str = "") -> str:
    """`aios apps`: one row per app under labelled columns (the port it listens on is
    said as a port, `port 8101`, never a bare number that reads like a process id),
    each app named in `language` (the settings' `ui_language`) when its manifest
    gives a name in it."""
    rows = [("APP", "STATUS", "LISTENS ON", "NAME")]
    for app in apps:
        port = app.get("port")
        shown = (app.get("names") or {}).get(language) or app.get("name") or app["id"]
        name = f"{app.get('icon', '')} {shown}".strip()
        if app.get("error"):
            name += f"  ({app['error']})"
        rows.append((app["id"], str(app["status"]), f"port {port}" if port else "-", name))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True))
        + "  "
        + row[3]
        for row in rows
    )


def cmd_stop(args: argparse.Namespace) -> int:
    state = StateDir(Path(args.state_dir) if args.state_dir else default_state_dir())
    pid = state.running_pid()
    if pid is None:
        _err(f"no running controller recorded in {state.root}")
        return 1
    os.kill(pid, signal.SIGTERM)
    if not _wait_gone(pid, timeout=15):
        _err(f"controller {pid} did not stop within 15 s")
        return 1
    print(f"stopped controller {pid}")
    return 0


def _wait_gone(pid: int, timeout: float) -> bool:
    """Until `pid` has exited (a zombie waiting for its parent counts as exited)."""
    import psutil

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def cmd_new_app(args: argparse.Namespace) -> int:
    try:
        from aios.scaffold import scaffold_app
    except ImportError as exc:
        _err(f"the SDK's app template is not available ({exc})")
        return 1
    from aios_protocol.errors import AiosError

    try:
        path = scaffold_app(Path(args.apps_dir), args.app_id, name=args.name)
    except (AiosError, ValueError, FileExistsError) as exc:
        _err(str(getattr(exc, "message", exc)))
        return 1
    print(f"created {path}")
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """`aios mcp --app APP_ID`: the app's toolbox over stdio (mcp_server/stdio.py)."""
    from aios_protocol.errors import AiosError
    from mcp_server.stdio import serve_app_over_mcp

    config = Path(args.config)
    state = Path(args.state_dir).expanduser() if args.state_dir else default_state_dir()
    try:
        return serve_app_over_mcp(
            args.app,
            apps_dir=Path(args.apps_dir),
            state_dir=state.resolve(),
            config_path=config.resolve() if config.exists() else None,
            user_id=args.user,
        )
    except AiosError as exc:
        _err(exc.message)
        return 1


def cmd_install(args: argparse.Namespace) -> int:
    """Into the running system (registered at once), else into `--apps-dir`."""
    from aios_protocol.errors import AiosError

    source = Path(args.path).expanduser().resolve()
    running = _Running(args.state_dir)
    try:
        if running.url and running.token and running.state.running_pid() is not None:
            answer = running.call("POST", "/api/apps/install", {"path": str(source)})
            app = answer.get("app") or {}
            print(f"installed {answer['installed']} ({app.get('status', '?')})")
            return 0
        from controller.apps.installer import install_app

        spec = install_app(source, Path(args.apps_dir))
        print(f"installed {spec.app_id} into {spec.folder}")
    except AiosError as exc:
        _err(f"not installed: {exc.message}")
        return 1
    return 0


def cmd_uninstall(args: argparse.Namespace) -> int:
    """From the running system (stopped, off the desktop), else from `--apps-dir`."""
    from aios_protocol.errors import AiosError

    keep = not args.delete_workspace
    running = _Running(args.state_dir)
    try:
        if running.url and running.token and running.state.running_pid() is not None:
            answer = running.call(
                "POST", f"/api/apps/{args.app_id}/uninstall", {"keep_workspace": keep}
            )
            aside = answer.get("workspace")
        else:
            from controller.apps.installer import uninstall_app

            aside = uninstall_app(
                Path(args.apps_dir),
                args.app_id,
                running.state.workspaces_dir,
                keep_workspace=keep,
            )
    except AiosError as exc:
        _err(f"not uninstalled: {exc.message}")
        return 1
    print(
        f"uninstalled {args.app_id}"
        + (f"; its workspace is kept in {aside}" if aside else "")
    )
    return 0


# --------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="aios", description="Triton AIOS")
    sub = parser.add_subparsers(dest="command", required=True)

    def state_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--state-dir", help="state folder (default $AIOS_STATE_DIR or ~/.aios)"
        )

    start = sub.add_parser("start", help="start the executor, the apps and the desktop")
    mode = start.add_mutually_exclusive_group()
    mode.add_argument("--headless", action="store_true", help="no window")
    mode.add_argument("--browser", action="store_true", help="serve; open a browser tab")
    start.add_argument("--config", default=str(shipped.CONFIG), help="config.json to use")
    start.add_argument("--apps-dir", default=str(shipped.APPS), help="folder of apps")
    start.add_argument(
        "--ports", default=str(shipped.PORTS), help="port map file, or 'auto'"
    )
    start.add_argument("-v", "--verbose", action="store_true")
    state_option(start)
    start.set_defaults(func=cmd_start)

    say = sub.add_parser("say", help="send one instruction to the running system")
    say.add_argument("text", nargs="?", help="the instruction (or --audio)")
    say.add_argument("--audio", help="a WAV file to recognise and send")
    say.add_argument(
        "--lang", help="language of --audio (default: the settings' voice language)"
    )
    say.add_argument("--json", action="store_true", help="print the raw answer")
    say.add_argument(
        "--session",
        metavar="ID",
        help="go on with an earlier conversation (default: the one this CLI had last)",
    )
    state_option(say)
    say.set_defaults(func=cmd_say)

    apps = sub.add_parser("apps", help="list the apps and their status")
    apps.add_argument("--json", action="store_true")
    state_option(apps)
    apps.set_defaults(func=cmd_apps)

    stop = sub.add_parser("stop", help="stop the running controller")
    state_option(stop)
    stop.set_defaults(func=cmd_stop)

    new_app = sub.add_parser("new-app", help="create an app folder from the template")
    new_app.add_argument("app_id", metavar="NAME")
    new_app.add_argument("--apps-dir", default=str(shipped.APPS))
    new_app.add_argument("--name", help="display name (default: NAME)")
    new_app.set_defaults(func=cmd_new_app)

    install = sub.add_parser("install", help="install an app from a folder or a .zip")
    install.add_argument("path", metavar="PATH")
    install.add_argument(
        "--apps-dir", default=str(shipped.APPS), help="when no system runs"
    )
    state_option(install)
    install.set_defaults(func=cmd_install)

    uninstall = sub.add_parser("uninstall", help="remove an app (its workspace kept)")
    uninstall.add_argument("app_id", metavar="APP_ID")
    uninstall.add_argument("--delete-workspace", action="store_true")
    uninstall.add_argument(
        "--apps-dir", default=str(shipped.APPS), help="when no system runs"
    )
    state_option(uninstall)
    uninstall.set_defaults(func=cmd_uninstall)

    mcp = sub.add_parser("mcp", help="serve one app's tools over stdio to an MCP host")
    mcp.add_argument("--app", required=True, metavar="APP_ID", help="the app to serve")
    mcp.add_argument(
        "--user",
        default="default",
        metavar="USER_ID",
        help="the user whose sandbox every call works in (default: the owner)",
    )
    mcp.add_argument("--apps-dir", default=str(shipped.APPS))
    mcp.add_argument("--config", default=str(shipped.CONFIG), help="config.json to use")
    state_option(mcp)
    mcp.set_defaults(func=cmd_mcp)

    from bench.run import add_parser as add_bench

    add_bench(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
