"""The protocol's models build their validators on first use (`defer_build`), and
pydantic's first build is not safe when two threads make it at once (one of them
failed a request with `AttributeError: … __pydantic_core_schema__`). So every
process that serves on threads builds the models it uses before its first request:
the controller and the executor all of them, an SDK app the ones it reads and
answers. Each check runs in a fresh interpreter, where nothing was built yet."""

from __future__ import annotations

import subprocess

import pytest

from tests.procs import PYTHON, ROOT

pytestmark = pytest.mark.process

_INCOMPLETE = """
import inspect, pydantic
import aios_protocol.messages as m
def incomplete():
    return sorted(
        n for n, o in vars(m).items()
        if inspect.isclass(o) and issubclass(o, pydantic.BaseModel)
        and o.__module__ == m.__name__ and not o.__pydantic_complete__
    )
"""


def _run(code: str) -> str:
    done = subprocess.run(
        [PYTHON, "-c", _INCOMPLETE + code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_every_model_is_built_before_the_controller_or_executor_serves(tmp_path) -> None:
    said = _run(
        "assert incomplete()  # deferred at import\n"
        "from aios_runtime.settings import Settings\n"
        "from executor.service import create_app\n"
        f"create_app(Settings(), token='t' * 24, state_dir={str(tmp_path)!r})\n"
        "print(incomplete())\n"
    )
    assert said == "[]"


def test_an_sdk_app_builds_what_it_reads_and_answers() -> None:
    said = _run(
        "from aios_sdk import AIOSAgent\n"
        "from aios_sdk.server import create_app\n"
        "class A(AIOSAgent):\n"
        "    name = 'a'; description = 'a'; icon = 'a'; role_prompt = 'a'\n"
        "    def handle(self, instruction, context, action_request=None):\n"
        "        return {}\n"
        "create_app(A(), token='t' * 24)\n"
        "left = incomplete()\n"
        "print('HandleRequest' in left, 'AppReply' in left)\n"
    )
    assert said == "False False"


def test_the_app_template_builds_every_model_before_it_forks_an_app() -> None:
    """A forked app inherits the template's built validators: its first tool call or
    plan does not build them again after its fork."""
    said = _run("from aios_sdk import zygote\nzygote._preload()\nprint(incomplete())\n")
    assert said == "[]"
