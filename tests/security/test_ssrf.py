"""SECURITY.md R1–R5: `http_request` through a real executor process.

A fake web server listens on 127.0.0.2 — the one host the test config explicitly
allows (`http_allow_private_hosts`) — and a bare TCP listener on 127.0.0.1 counts
every connection it gets: "refused before connecting" means it got none. A second
executor also has a domain whitelist (R2, R3, R4).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.procs import stop
from tests.security.conftest import RunningExecutor, start_test_executor
from tests.security.fake_web import ALLOWED_HOST

pytestmark = pytest.mark.process

CAP = 64 << 10
DOWNLOAD_CAP = 128 << 10
CONFIG = {
    "tool_timeout": {"http_request": 3, "shell_exec": 5, "file_read": 5},
    "tool_sandbox": {"http_allow_private_hosts": [ALLOWED_HOST]},
    "limits": {"response_bytes": CAP, "download_bytes": DOWNLOAD_CAP},
}


@pytest.fixture(scope="module")
def open_exec(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningExecutor]:
    running = start_test_executor(tmp_path_factory.mktemp("ssrf_open"), CONFIG)
    yield running
    stop(running.proc)


@pytest.fixture(scope="module")
def listed_exec(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningExecutor]:
    config = json.loads(json.dumps(CONFIG))
    config["tool_sandbox"]["http_domain_whitelist"] = [
        ALLOWED_HOST,
        "localhost",
        "allowed.com",
    ]
    running = start_test_executor(tmp_path_factory.mktemp("ssrf_listed"), config)
    yield running
    stop(running.proc)


def get(executor: RunningExecutor, url: str, **args: object) -> dict:
    return executor.call("http_request", method="GET", url=url, **args)


def refused(result: dict) -> bool:
    return result["status"] == "error" and result["code"] == "url_not_allowed"


# ---------------------------------------------------------------------- R1


def test_r1_loopback_private_and_numeric_forms_refused_before_connecting(
    open_exec: RunningExecutor, listener: tuple[int, list[object]]
) -> None:
    port, accepted = listener
    urls = [
        f"http://127.0.0.1:{port}/",
        f"http://127.0.0.1:{open_exec.port}/health",  # one of our own services
        f"http://localhost:{port}/",
        f"http://[::1]:{port}/",
        f"http://2130706433:{port}/",
        f"http://0x7f.1:{port}/",
        f"http://0177.0.0.1:{port}/",
        f"http://127.1:{port}/",
        f"http://[::ffff:127.0.0.1]:{port}/",
        f"http://0.0.0.0:{port}/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",
        "http://[fe80::1]/",
        "http://[fd00::1]/",
        "http://224.0.0.1/",
    ]
    for url in urls:
        result = get(open_exec, url)
        assert refused(result), (url, result)
    assert accepted == []


def test_r1_a_host_the_user_allowed_is_reached(
    open_exec: RunningExecutor, fake: str
) -> None:
    result = get(open_exec, f"{fake}/ok")
    assert result["status"] == "ok" and result["result"] == {"ok": True}


# ---------------------------------------------------------------------- R2


def test_r2_an_allowed_name_resolving_to_loopback_is_blocked(
    listed_exec: RunningExecutor, listener: tuple[int, list[object]]
) -> None:
    port, accepted = listener
    result = get(listed_exec, f"http://localhost:{port}/")  # whitelisted, but loopback
    assert refused(result) and "loopback" in result["error"], result
    assert accepted == []


# ---------------------------------------------------------------------- R3


def test_r3_redirects_to_blocked_addresses_or_other_domains_are_blocked(
    open_exec: RunningExecutor,
    listed_exec: RunningExecutor,
    fake: str,
    listener: tuple[int, list[object]],
) -> None:
    port, accepted = listener
    cases = [
        (listed_exec, f"http://localhost:{port}/"),  # allowed name, loopback address
        (listed_exec, f"http://127.0.0.1:{port}/"),
        (listed_exec, "http://evil.example/"),  # a domain not on the whitelist
        (listed_exec, "http://allowed.com.evil.example/"),
        (open_exec, "http://169.254.169.254/latest/meta-data/"),
        (open_exec, f"http://[::ffff:127.0.0.1]:{port}/"),
        (open_exec, "file:///etc/passwd"),
    ]
    for executor, target in cases:
        result = get(executor, f"{fake}/redirect?to={target}")
        assert refused(result), (target, result)
    assert accepted == []


def test_r3_at_most_five_redirects(open_exec: RunningExecutor, fake: str) -> None:
    assert get(open_exec, f"{fake}/hop/5")["result"] == {"ok": True}
    result = get(open_exec, f"{fake}/hop/6")
    assert result["status"] == "error" and result["code"] == "too_many_redirects", result


# ---------------------------------------------------------------------- R4


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "gopher://127.0.0.2:70/_evil",
        "ftp://allowed.com/x",
        "http://allowed.com@evil.example/",
        "http://allowed.com:pw@evil.example/",
        "http://allowed.com.evil.example/",
        "http://evil.example#@allowed.com/",
        "http://evilallowed.com/",
        "//allowed.com/x",
    ],
)
def test_r4_schemes_userinfo_and_lookalike_domains_refused(
    listed_exec: RunningExecutor, url: str
) -> None:
    result = get(listed_exec, url)
    assert refused(result), (url, result)


# ---------------------------------------------------------------------- R5


def _leftovers(workdir: Path) -> list[str]:
    return sorted(
        p.name for p in workdir.rglob("*") if "song" in p.name or p.suffix == ".part"
    )


def test_r5_endless_and_huge_bodies_stop_at_the_cap_with_flat_memory(
    open_exec: RunningExecutor, fake: str
) -> None:
    rss_before = psutil.Process(open_exec.proc.pid).memory_info().rss
    for path in ("/endless", "/huge"):
        result = get(open_exec, f"{fake}{path}")
        assert result["status"] == "error" and result["code"] == "response_too_large", (
            result
        )
        saved = get(open_exec, f"{fake}{path}", save_to="song.mp3")
        assert saved["status"] == "error" and saved["code"] == "response_too_large", saved
        assert _leftovers(open_exec.workdir) == []  # the partial download is removed
    grown = psutil.Process(open_exec.proc.pid).memory_info().rss - rss_before
    assert grown < 64 << 20, f"executor grew by {grown} bytes"


def test_r5_a_slow_drip_stops_at_the_deadline_and_the_partial_file_is_removed(
    open_exec: RunningExecutor, fake: str
) -> None:
    result = get(open_exec, f"{fake}/drip", save_to="song.mp3")
    assert result["status"] == "error" and result["code"] == "tool_timeout", result
    assert _leftovers(open_exec.workdir) == []
    plain = get(open_exec, f"{fake}/drip")
    assert plain["status"] == "error" and plain["code"] == "tool_timeout", plain
