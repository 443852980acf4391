"""Where the files shipped with Triton AIOS are: the one place that says so.

Besides its code the product reads, at run time, the shipped apps (`apps/`), the
example skills (`skills/`), the default `config.json` and `ports.json`, the routing
set `aios bench` replays, the desktop's web files and the SDK's app template. In a
checkout (run from it or installed with `pip install -e`) they are where the
repository keeps them; an installed wheel carries the repository's root files and
folders as package data in `aios_runtime/shipped_files/` (pyproject.toml maps them
there) and its packages side by side in site-packages, as in the checkout. Nothing
here depends on the current directory, and nothing is written here at run time: what
changes lives in the state folder.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "APP_TEMPLATE",
    "APPS",
    "CONFIG",
    "DESKTOP_WEB",
    "EXAMPLE_SKILLS",
    "PACKAGES_ROOT",
    "PORTS",
    "ROOT",
    "ROUTING_SET",
]

# the folder our top-level packages are imported from: the checkout, or site-packages
PACKAGES_ROOT = Path(__file__).resolve().parents[1]
_PACKAGED = Path(__file__).resolve().with_name("shipped_files")

# the repository's root files and folders: in the wheel's package data, else the checkout
ROOT = _PACKAGED if _PACKAGED.is_dir() else PACKAGES_ROOT

APPS = ROOT / "apps"
EXAMPLE_SKILLS = ROOT / "skills"
CONFIG = ROOT / "config.json"
PORTS = ROOT / "ports.json"
ROUTING_SET = ROOT / "tests" / "controller" / "routing_set.json"

# package data of the packages that own them
DESKTOP_WEB = PACKAGES_ROOT / "desktop" / "web"
APP_TEMPLATE = PACKAGES_ROOT / "aios_sdk" / "template"
