"""SECURITY.md D1 (limits on one tool run) and D2 (100 simultaneous calls), against a
real executor in each sandbox mode and against the real controller."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import psutil
import pytest
import requests

from tests.controller.system import RunningSystem
from tests.procs import processes_tagged
from tests.security.conftest import (
    APP1_TOKEN,
    APP2_TOKEN,
    RunningExecutor,
    executors_in_both_modes,
    pick_mode,
)

pytestmark = pytest.mark.process

FILE_CAP = 8 << 20
CONFIG = {
    "tool_timeout": {"shell_exec": 20, "file_read": 5},
    "tool_sandbox": {"shell_whitelist": ["ls", "cat", "echo", "python3", "sleep"]},
    "limits": {"file_size_bytes": FILE_CAP, "memory_bytes": 512 << 20, "tasks_per_run": 64},
}


@pytest.fixture(scope="module")
def executors(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, RunningExecutor]]:
    with executors_in_both_modes(tmp_path_factory, CONFIG, "res") as started:
        yield started


@pytest.fixture(params=["bubblewrap", "rlimit"])
def executor(
    request: pytest.FixtureRequest, executors: dict[str, RunningExecutor]
) -> RunningExecutor:
    return pick_mode(executors, request.param)


def run_script(
    executor: RunningExecutor, code: str, *args: str, timeout: float = 20
) -> dict:
    name = f"s_{secrets.token_hex(4)}.py"
    (executor.workdir / name).write_text(code)
    return executor.call("shell_exec", cmd=["python3", name, *args], timeout=timeout)


# ---------------------------------------------------------------------- D1


def test_d1_a_gigabyte_of_output_is_cut_at_the_cap_with_executor_memory_flat(
    executor: RunningExecutor,
) -> None:
    rss_before = psutil.Process(executor.proc.pid).memory_info().rss
    result = run_script(
        executor,
        "import sys\nchunk = b'y' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.buffer.write(chunk)\n",
    )
    assert result["status"] == "ok", {k: v for k, v in result.items() if k != "result"}
    out = result["result"]
    assert out["truncated"] is True
    assert 0 < len(out["stdout"]) <= 1 << 20
    grown = psutil.Process(executor.proc.pid).memory_info().rss - rss_before
    assert grown < 64 << 20, f"executor grew by {grown} bytes"


def test_d1_a_fork_bomb_is_stopped_by_the_task_ceiling(executor: RunningExecutor) -> None:
    if executor.health()["fork_limit"] == "none":
        pytest.skip(
            "root without a usable pids cgroup: nothing caps the number of processes"
        )
    counted = run_script(
        executor,
        "import os, time\nn = 0\ntry:\n    for _ in range(1000):\n"
        "        if os.fork() == 0:\n            time.sleep(30)\n            os._exit(0)\n"
        "        n += 1\nexcept OSError:\n    pass\nprint(n)\n",
    )
    assert counted["status"] == "ok", counted
    assert 0 < int(counted["result"]["stdout"]) < 64  # the ceiling, not 1000
    tag = f"bomb-{secrets.token_hex(4)}"
    bomb = run_script(
        executor,
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
        tag,
        timeout=3,
    )
    assert bomb["status"] == "error" and bomb["code"] == "tool_timeout", bomb
    assert processes_tagged(tag) == []  # nothing of the bomb survives its timeout
    assert executor.health()["status"] == "ok"


def test_d1_a_memory_hog_is_stopped(executor: RunningExecutor) -> None:
    result = run_script(executor, "x = bytearray(4 << 30)\nprint('allocated')\n")
    assert result["status"] == "ok", result
    assert result["result"]["returncode"] != 0
    assert "MemoryError" in result["result"]["stderr"]
    assert "allocated" not in result["result"]["stdout"]


def test_d1_a_disk_filler_is_stopped_at_the_file_size_cap(
    executor: RunningExecutor,
) -> None:
    result = run_script(
        executor,
        "chunk = b'z' * (1 << 20)\nwith open('filler.bin', 'wb') as f:\n"
        "    for _ in range(2048):\n        f.write(chunk)\n        f.flush()\n",
    )
    filler = executor.workdir / "filler.bin"
    try:
        assert result["status"] == "ok", result
        assert result["result"]["returncode"] != 0
        assert "File too large" in result["result"]["stderr"]
        assert filler.stat().st_size <= FILE_CAP
    finally:
        filler.unlink(missing_ok=True)


def test_d1_sleep_3600_is_killed_at_its_timeout(executor: RunningExecutor) -> None:
    result = executor.call("shell_exec", cmd=["sleep", "3600"], timeout=2)
    assert result["status"] == "error" and result["code"] == "tool_timeout", result
    survivors = [
        p for p in processes_tagged("3600") if "sleep" in " ".join(p.info["cmdline"])
    ]
    assert survivors == []


# ---------------------------------------------------------------------- D2


def _post(url: str, body: dict, token: str) -> requests.Response:
    return requests.post(url, json=body, headers={"X-AIOS-Token": token}, timeout=60)


def test_d2_executor_100_simultaneous_calls_bounded_and_other_apps_served(
    executors: dict[str, RunningExecutor],
) -> None:
    executor = executors.get("bubblewrap") or executors["rlimit"]
    (executor.workdir / "slow.py").write_text("import time\ntime.sleep(1)\n")
    slow = {"tool": "shell_exec", "args": {"cmd": ["python3", "slow.py"]}}
    quick = {"tool": "file_list", "args": {"path": ""}}
    with ThreadPoolExecutor(100) as pool:
        flood = [
            pool.submit(_post, f"{executor.url}/call", slow, APP1_TOKEN) for _ in range(100)
        ]
        other = _post(f"{executor.url}/call", quick, APP2_TOKEN)
        answers = [f.result() for f in flood]
    codes = [a.status_code for a in answers]
    assert set(codes) <= {200, 503}, codes
    assert codes.count(503) > 0 and codes.count(200) > 0
    assert {a.json()["error"]["code"] for a in answers if a.status_code == 503} == {
        "overloaded"
    }
    assert all(a.json()["status"] == "ok" for a in answers if a.status_code == 200)
    assert other.status_code == 200 and other.json()["status"] == "ok"
    assert executor.health()["status"] == "ok"


@pytest.mark.slow
def test_d2_controller_100_simultaneous_instructions_bounded_and_other_apps_served(
    shared_system: RunningSystem,
) -> None:
    url = f"{shared_system.url}/api/instruction"
    with ThreadPoolExecutor(100) as pool:
        flood = [
            pool.submit(_post, url, {"text": "慢应用 你好"}, shared_system.token)
            for _ in range(100)
        ]
        opened = shared_system.post("/api/apps/hello_app/open", {})
        answers = [f.result() for f in flood]
    codes = [a.status_code for a in answers]
    assert set(codes) <= {200, 503}, codes
    assert codes.count(503) > 0 and codes.count(200) > 0
    assert {a.json()["error"]["code"] for a in answers if a.status_code == 503} == {
        "overloaded"
    }
    served = [a.json()["tasks"][0]["result"] for a in answers if a.status_code == 200]
    assert all(r["data"]["content"] == "slow ok" for r in served)
    assert opened.status_code == 200 and opened.json()["status"] == "ok"
    after = shared_system.say("回声一下 还活着")
    assert after["tasks"][0]["result"]["data"]["content"] == "echo: 回声一下 还活着"


@pytest.mark.slow
def test_d2_controller_per_app_calls_bounded(shared_system: RunningSystem) -> None:
    """Opens of one slow app beyond its share are refused at once; others still open."""
    with ThreadPoolExecutor(20) as pool:
        flood = [
            pool.submit(
                _post,
                f"{shared_system.url}/api/apps/slow_app/open",
                {},
                shared_system.token,
            )
            for _ in range(20)
        ]
        hello = shared_system.post("/api/apps/hello_app/open", {})
        codes = [f.result().status_code for f in flood]
    assert codes.count(503) > 0 and codes.count(200) > 0
    assert hello.status_code == 200 and hello.json()["status"] == "ok"
