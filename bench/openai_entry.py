"""`first_chunk_ms` of `aios bench`: what the OpenAI-compatible entry costs before its
first streamed byte.

`first_chunk_latency(system, samples, warmup)` sends `POST /v1/chat/completions`
with `stream: true` and `model: "triton/<probe app>"` over one keep-alive
connection and times each request from sending it to the first byte of the body
(the role chunk, written before the turn starts): the Bearer check, reading and
validating the body, resolving the user's session and opening the event stream.
No model is involved (the probe app answers offline and the role chunk precedes
its work); the rest of each answer is read to its `[DONE]` before the next
request, so samples do not overlap, and its end is timed as well.
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlsplit

from aios_runtime.json_client import new_pool

__all__ = ["first_chunk_latency"]


def first_chunk_latency(
    url: str, token: str, app_id: str, text: str, samples: int, warmup: int
) -> tuple[list[float], list[float]]:
    """(seconds to the first body byte, seconds to the whole answer), per sample."""
    parts = urlsplit(url)
    # one kept-alive connection of the pool the hops use (aios_runtime.json_client)
    pool = new_pool(parts.hostname or "127.0.0.1", parts.port or 80, maxsize=1)
    body = json.dumps(
        {
            "model": f"triton/{app_id}",
            "stream": True,
            "messages": [{"role": "user", "content": text}],
        }
    ).encode()
    headers: dict[str, Any] = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "X-AIOS-Conversation-Id": "bench-first-chunk",
    }
    firsts: list[float] = []
    wholes: list[float] = []
    try:
        for i in range(warmup + samples):
            started = time.perf_counter()
            response = pool.urlopen(
                "POST",
                "/v1/chat/completions",
                body=body,
                headers=headers,
                timeout=60,
                preload_content=False,
            )
            first = response.read1(1)
            first_at = time.perf_counter()
            rest = response.read()
            done_at = time.perf_counter()
            response.release_conn()
            if response.status != 200 or not first:
                raise RuntimeError(
                    f"/v1 stream failed: HTTP {response.status} {rest[:200]!r}"
                )
            if not rest.rstrip().endswith(b"data: [DONE]"):
                raise RuntimeError(f"/v1 stream did not end with [DONE]: {rest[-200:]!r}")
            if i >= warmup:
                firsts.append(first_at - started)
                wholes.append(done_at - started)
    finally:
        pool.close()
    return firsts, wholes
