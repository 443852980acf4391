"""An installed copy: `pip install` of the project (not editable) carries everything
the product reads at run time, finds it from whatever folder it is started in, and
writes nothing into the installed tree.

pyproject.toml lists the wheel's packages (one of them is mapped, which
`packages.find` cannot express); the first test keeps that list equal to the tree's.
The second installs the project into a new virtual environment that reuses this
Python's packages (`--system-site-packages`, `--no-deps`), without the internet, and
runs the installed `aios` from an empty folder.
"""

from __future__ import annotations

import csv
import importlib.metadata
import importlib.util
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
import tomllib
from pathlib import Path

import pytest
from setuptools import find_namespace_packages

from aios_runtime.settings import LLM_ENV
from tests.procs import PYTHON, ROOT
from tests.product import PRODUCT_PACKAGES

SHIPPED_APPS = sorted(
    folder.name
    for folder in (ROOT / "apps").iterdir()
    if (folder / "manifest.json").is_file()
)
# what `pip install` of a checkout leaves out or would write into it
_NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    "__pycache__",
    "*.pyc",
    "build",
    "dist",
    "*.egg-info",
    ".cache",
    ".*_cache",
    "test-artifacts",
    ".venv",
    ".aios",
)
# the installed copy runs as a user's would: no checkout on its path, no state folder
# or model of the test run
_DROPPED_ENV = ("PYTHONPATH", "AIOS_STATE_DIR", "AIOS_TOKEN", *LLM_ENV)
# the folders an app's confinement hides (argv: state folder, config file); under /tmp,
# where the test's copy is installed, the private /tmp hides them anyway, so the list
# itself is what shows what an app of a copy installed elsewhere would not see
_HIDDEN_FROM_APPS = """
import json, sys
from aios_runtime.settings import AppSandboxSettings
from controller.apps.confinement import Confiner
confiner = Confiner(
    AppSandboxSettings(), state_dir=sys.argv[1], config_file=sys.argv[2], apps_dirs=[]
)
print(json.dumps(confiner._hidden))
"""


def test_the_wheel_lists_every_package_of_the_tree() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = config["tool"]["setuptools"]
    found = find_namespace_packages(
        str(ROOT),
        include=[name for p in PRODUCT_PACKAGES for name in (p, f"{p}.*")],
        exclude=["*__pycache__*"],
    )
    listed = set(setuptools["packages"]) - set(setuptools["package-dir"])
    assert sorted(listed) == sorted(found)


def _builds_wheels_alone() -> bool:
    """Whether this Python's setuptools meets pyproject.toml's build requirement and
    makes a wheel by itself (its own `bdist_wheel` from 70.1, else the `wheel` package)."""
    try:
        version = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return False
    numbers = re.findall(r"\d+", version)[:2]
    major, minor = (int(n) for n in (*numbers, "0")[:2])
    if (major, minor) < (68, 0):
        return False
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


def _offline_install_options() -> list[str]:
    """pip options that build and install the project without the internet: no build
    isolation when this Python can build the wheel itself, else an isolated build whose
    backend comes from the local (`file:`) package indexes pip is configured with."""
    if _builds_wheels_alone():
        return ["--no-index", "--no-build-isolation"]
    shown = subprocess.run(
        [PYTHON, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False
    ).stdout
    local = [
        url
        for line in shown.splitlines()
        if "index-url" in line
        for url in re.findall(r"file:[^\s'\"]+", line)
    ]
    if not local:
        pytest.skip("this Python cannot build a wheel and pip knows no local package index")
    extra = [option for url in local[1:] for option in ("--extra-index-url", url)]
    return ["--index-url", local[0], *extra]


def _run(args: list[str | Path], **kw: object) -> str:
    done = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, timeout=120, **kw
    )
    assert done.returncode == 0, f"{args[:4]} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _first_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        lines.put(proc.stdout.readline().decode("utf-8", "replace"))

    threading.Thread(target=read, daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        return ""


def _unrecorded(site_packages: Path) -> list[str]:
    """Files under the installed packages that the installation did not put there."""
    (record,) = site_packages.glob("triton_aios-*.dist-info/RECORD")
    with record.open(encoding="utf-8", newline="") as rows:
        recorded = {row[0] for row in csv.reader(rows) if row}
    present = {
        path.relative_to(site_packages).as_posix()
        for package in PRODUCT_PACKAGES
        for path in (site_packages / package).rglob("*")
        if path.is_file()
    }
    return sorted(present - recorded)


@pytest.mark.slow
def test_an_installed_copy_serves_the_shipped_apps_from_any_folder(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=_NOT_SOURCE)
    venv = tmp_path / "venv"
    _run([PYTHON, "-m", "venv", "--without-pip", "--system-site-packages", venv])
    python, aios = venv / "bin" / "python", venv / "bin" / "aios"
    options = _offline_install_options()
    _run(
        [
            PYTHON,
            "-m",
            "pip",
            "--python",
            python,
            "install",
            "-q",
            "--no-deps",
            *options,
            source,
        ]
    )

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    shown = _run(
        [
            python,
            "-c",
            "import aios, sysconfig; print(aios.__file__, sysconfig.get_path('purelib'))",
        ],
        cwd=elsewhere,
        env=env,
    )
    imported, site_packages = (Path(word) for word in shown.split())
    assert imported.is_relative_to(site_packages)  # the installed copy, not the checkout
    assert _unrecorded(site_packages) == []

    state = tmp_path / "state"
    hidden = json.loads(
        _run(
            [python, "-c", _HIDDEN_FROM_APPS, state, elsewhere / "config.json"],
            cwd=elsewhere,
            env=env,
        )
    )
    # the packages beside ours stay importable; the shipped apps and config do not show
    assert str(site_packages) not in hidden
    assert str(site_packages / "aios_runtime" / "shipped_files") in hidden
    log = tmp_path / "controller.log"

    def aios_says(*args: str) -> str:
        return _run([aios, *args, "--state-dir", state], cwd=elsewhere, env=env)

    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [aios, "start", "--headless", "--ports", "auto", "--state-dir", state],
            cwd=elsewhere,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            start_new_session=True,
        )
    try:
        line = _first_line(proc, timeout=60)
        assert line.startswith("ready "), f"no ready line ({line!r}): {log.read_text()}"

        apps = json.loads(aios_says("apps", "--json"))
        assert sorted(app["id"] for app in apps) == SHIPPED_APPS
        assert [app for app in apps if app.get("error")] == []

        answer = json.loads(aios_says("say", "跟我打个招呼", "--json"))
        assert [(t["app_id"], t["status"]) for t in answer["tasks"]] == [
            ("hello_app", "done")
        ], log.read_text()

        aios_says("stop")
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:  # stopped as `aios stop` would, then for good
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)

    assert _unrecorded(site_packages) == []  # the state went to the state folder
    assert list(elsewhere.iterdir()) == []
