"""`python -m executor --port P --config F --state-dir S`: run the executor service.

The master token comes from the environment (`AIOS_TOKEN`), never from argv. The
process makes itself a child subreaper (so double-forked tool processes stay
findable) and on SIGTERM / SIGINT stops every tool process it started before it
exits. This module alone reads files and the environment.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from types import FrameType


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m executor", description=__doc__)
    parser.add_argument(
        "--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: any)"
    )
    parser.add_argument("--config", default=None, help="path of config.json")
    parser.add_argument("--state-dir", required=True, help="where tool-call logs are kept")
    parser.add_argument("--threads", type=int, default=16, help="HTTP worker threads")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    token = os.environ.get("AIOS_TOKEN", "")
    if not token:
        print("executor: AIOS_TOKEN is not set", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s executor %(message)s")

    from aios_runtime.serving import start_server
    from aios_runtime.settings import load_settings, user_settings_path
    from aios_runtime.warmup import warm_up_later
    from executor.sandbox.runner import enable_subreaper
    from executor.service import create_app

    enable_subreaper()
    user = user_settings_path(args.state_dir) if args.state_dir else None
    settings = load_settings(args.config, user=user)
    app = create_app(
        settings,
        token=token,
        state_dir=args.state_dir,
        config_path=args.config,
        max_concurrent=max(1, args.threads - 4),
    )
    toolbox = app.extensions["aios_toolbox"]
    from executor.tools.system_info import keep_window_open

    # the system-information tool's CPU window, kept open so its first answer is at once
    threading.Thread(
        target=keep_window_open, args=(threading.Event(),), name="cpu-window", daemon=True
    ).start()

    # the tools' modules and argument checks, once the controller has found the
    # executor up and its own start is over: not in the way of the start, and done
    # before a person's first click
    warm_up_later(toolbox.warm_up, after=app.extensions["aios_probed"])

    def stop(signum: int, _frame: FrameType | None) -> None:
        try:
            toolbox.shutdown()
        finally:
            os._exit(0)  # nothing is left to do but exit; the tools were stopped

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        start_server(app, args.port, threads=args.threads, background=False)
    finally:
        toolbox.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
