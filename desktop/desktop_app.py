"""`python desktop/desktop_app.py` — the design's entry name for the whole system.

Starts everything exactly like `aios start` (executor, apps, controller, and the
desktop window when a display exists); extra arguments are passed through, e.g.
`python desktop/desktop_app.py --browser`. The repository root is put on
`sys.path`, and the repository's `config.json`, `apps/` and `ports.json` are used
unless other ones are given, so it works from any current directory.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def start_arguments(argv: list[str], root: Path = ROOT) -> list[str]:
    """`start` plus `argv`, with the repository's files for the options not given."""
    given = {arg.split("=", 1)[0] for arg in argv if arg.startswith("--")}
    defaults = {
        "--config": root / "config.json",
        "--apps-dir": root / "apps",
        "--ports": root / "ports.json",
    }
    extra: list[str] = []
    for option, path in defaults.items():
        if option not in given and path.exists():
            extra += [option, str(path)]
    return ["start", *argv, *extra]


def main(argv: list[str] | None = None) -> int:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    # the `aios` command runs as `python -m aios` would: the desktop package itself
    # never imports the system that composes it
    sys.argv = ["aios", *start_arguments(sys.argv[1:] if argv is None else argv)]
    try:
        runpy.run_module("aios", run_name="__main__", alter_sys=True)
    except SystemExit as done:
        return int(done.code or 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
