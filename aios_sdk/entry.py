"""An app package's entry point: `python main.py` serves the agent its folder exports.

An app of several modules is a Python package — its folder holds `__init__.py`,
which exports the agent class, beside modules that import each other relatively
(`from .flows import MusicFlows`). The controller starts every app as
`python main.py` in its folder (the manifest's `entry`), where a relative
import cannot work; so the package's `main.py` is only

    from aios_sdk import serve_package

    if __name__ == "__main__":
        serve_package(__file__)

and `serve_package` imports the folder as the package named after it (the app
id) — without putting the folder's parent, and with it every other app, on
`sys.path` — then serves the one `AIOSAgent` subclass the package exports. Tests
import the same modules in-process under any package name (`apps.music_app.flows`).
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType

from aios_sdk.agent import AIOSAgent

__all__ = ["agent_class", "import_package", "serve_package"]


def import_package(folder: str | Path) -> ModuleType:
    """Import `folder` (holding `__init__.py`) as the top-level package `folder.name`.

    Raises `ImportError` when the folder is no package, or when its name is already
    a module's (an app named after a library would hide it from the whole process).
    """
    folder = Path(folder).resolve()
    name = folder.name
    init = folder / "__init__.py"
    if not name.isidentifier() or not init.is_file():
        raise ImportError(f"{folder} is not a Python package (no __init__.py)")
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(init):
        return loaded
    if loaded is not None or importlib.util.find_spec(name) is not None:
        raise ImportError(
            f"app folder {name!r} has the name of another Python module; rename the folder"
        )
    spec = importlib.util.spec_from_file_location(
        name, init, submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    try:
        spec.loader.exec_module(package)
    except BaseException:
        del sys.modules[name]
        raise
    return package


def agent_class(package: ModuleType) -> type[AIOSAgent]:
    """The one concrete `AIOSAgent` subclass `package` exports (its public names)."""
    names = getattr(package, "__all__", None) or [
        n for n in vars(package) if not n.startswith("_")
    ]
    found = {
        value
        for value in (getattr(package, n, None) for n in names)
        if isinstance(value, type)
        and issubclass(value, AIOSAgent)
        and not inspect.isabstract(value)
    }
    if len(found) != 1:
        listed = ", ".join(sorted(cls.__name__ for cls in found)) or "none"
        raise ImportError(
            f"{package.__name__} must export exactly one AIOSAgent subclass "
            f"(found: {listed})"
        )
    return found.pop()


def serve_package(main_file: str) -> None:
    """Serve the agent of the package whose `main.py` is `main_file`; blocks."""
    from aios_sdk.server import serve

    package = import_package(Path(main_file).resolve().parent)
    serve(agent_class(package)())
