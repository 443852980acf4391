"""Many users at once (`aios bench`): twenty users, each with three apps open.

Every user other than the owner is served by processes of the apps for them alone
(docs/ARCHITECTURE.md, "Users"). `many_users` starts one system with a `/v1` key per
user; each user then sends its first instruction to each of three apps (over `/v1`,
`model: triton/<app_id>`, no model involved), whose process for that user does not
run yet: `first_call_ms_new_user` is the median of those first instructions, each
with its process's start (a fork of the app template, its health, its registration
with the executor). With the users' processes running, the whole process tree is
weighed (PSS, `bench.apps_open.tree_memory`): `pss_twenty_users_mb`.
"""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.system import RunningSystem

__all__ = ["APPS", "USERS", "many_users", "users_config"]

USERS = 20
# the apps each user opens, each with an instruction it answers without a model
APPS = (
    ("music_app", "my music library"),
    ("scheduler_app", "list my reminders"),
    ("skills_app", "list my skills"),
)


def _key(index: int) -> str:
    return f"sk-bench-user-{index:02d}-0123456789abcdef"


def users_config(base: Path, target: Path, users: int) -> Path:
    """`base` with a key bound to each of `users` users, and no app stopped for being
    idle while the figures are taken."""
    settings: dict[str, Any] = json.loads(base.read_text(encoding="utf-8"))
    settings["api_keys"] = [
        {"key": _key(i), "user": f"bench_user_{i:02d}"} for i in range(users)
    ]
    found = settings.get("apps")
    apps: dict[str, Any] = found if isinstance(found, dict) else {}
    settings["apps"] = {**apps, "idle_stop_s": 3600, "start_at_launch": False}
    target.write_text(json.dumps(settings, ensure_ascii=False), encoding="utf-8")
    return target


def _ask(url: str, key: str, app_id: str, text: str, timeout: float = 60.0) -> float:
    """Milliseconds of one `/v1/chat/completions` to `app_id` as the key's user."""
    body = {"model": f"triton/{app_id}", "messages": [{"role": "user", "content": text}]}
    request = urllib.request.Request(
        f"{url}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        method="POST",
    )
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        reply = json.loads(answer.read())
    took = (time.perf_counter() - started) * 1000
    content = str(reply.get("choices", [{}])[0].get("message", {}).get("content"))
    if "⚠️" in content:  # an error view: the app did not answer
        raise RuntimeError(f"{app_id} answered an error: {content[:200]}")
    return took


def many_users(
    apps_dir: Path, config: Path, state_dir: Path, users: int = USERS
) -> tuple[list[float], dict[str, dict[str, float]], int]:
    """(each user's first instruction to each app in ms, the tree's memory by label,
    how many processes the tree held) with `users` users, each with `APPS` open."""
    system = RunningSystem(
        apps_dir,
        users_config(config, config.with_name("config_users.json"), users),
        state_dir,
    )
    try:
        system.start()
        time.sleep(1.0)  # idle, as the first user finds it
        firsts = [
            _ask(system.url, _key(i), app_id, text)
            for i in range(users)
            for app_id, text in APPS
        ]
        sizes = system.settled_memory()
        import psutil

        assert system.proc is not None
        count = len(psutil.Process(system.proc.pid).children(recursive=True)) + 1
        return firsts, sizes, count
    finally:
        system.stop()
