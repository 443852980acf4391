"""The tokens of a request's model calls, against the fake server: the server's own
counts when it sends them, an estimate marked as one when it does not, and only the
calls made for the request's session while it is open."""

from __future__ import annotations

import threading

from controller.llm.client import LLMClient
from controller.llm.usage import UsageMeter
from tests.fakes.openai_server import NO_USAGE, FakeOpenAI, text_reply

HI = [{"role": "user", "content": "hi"}]
REAL = {"prompt_tokens": 30, "completion_tokens": 4, "total_tokens": 34}


def test_a_requests_calls_are_summed_from_the_servers_counts(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    meter = UsageMeter()
    fake.script(text_reply("one", usage=REAL), text_reply("two", usage=REAL))
    with meter.measuring("sess_a") as tally:
        client.chat(HI)

        def app_call() -> None:  # another thread, as an app's /api/llm call is
            with meter.counting_for("sess_a"):
                client.stream(HI)

        thread = threading.Thread(target=app_call)
        thread.start()
        thread.join()
    assert (tally.prompt_tokens, tally.completion_tokens) == (60, 8)
    assert tally.calls == 2 and tally.estimated is False


def test_a_server_without_usage_is_estimated_and_says_so(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    meter = UsageMeter()
    fake.script(text_reply("an answer of some length", usage=NO_USAGE))
    with meter.measuring("sess_b") as tally:
        client.stream(HI)
    assert tally.estimated is True
    assert tally.prompt_tokens > 0 and tally.completion_tokens > 0


def test_calls_for_another_session_or_after_the_request_do_not_count(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    meter = UsageMeter()
    fake.script(*(text_reply("x", usage=REAL) for _ in range(3)))
    with meter.measuring("sess_c") as tally:

        def other_session() -> None:
            with meter.counting_for("sess_other"):
                client.stream(HI)

        thread = threading.Thread(target=other_session)
        thread.start()
        thread.join()
    with meter.counting_for("sess_c"):  # the request is over
        client.stream(HI)
    client.chat(HI)  # in no request at all
    assert tally.calls == 0
