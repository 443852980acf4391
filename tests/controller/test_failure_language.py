"""A failure reads in the user's language only, and never in the exception's words.

The sentence comes from the strings table by the error's code (and variant): the
same code reads the same whatever its message says, and an English session reads
English even when a peer's message is Chinese. The controller's error bodies carry
the sentence as `user_message` in the language the request asks for, else the
settings' language; their `message` stays the developer's English.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from aios_protocol.errors import AiosError, AppUnavailable, Overloaded
from aios_protocol.messages import InstructionRequest
from aios_protocol.strings import user_message_of
from aios_runtime.settings import AdmissionSettings
from controller.apps.supervisor import _unavailable
from controller.pipeline.admission import Admission
from controller.pipeline.failures import failure_view
from controller.routing.router import PlannedTask
from tests.controller.fakes import make_pipeline, text_reply
from tests.controller.test_api import H, build

CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
EN, ZH = "en-US", "zh-CN"


@pytest.mark.parametrize(
    "own_words",
    ["应用「A」正在重启，请稍后再试", "app a is restarting", "アプリ", ""],
)
def test_the_sentence_depends_on_the_code_not_on_the_exceptions_words(
    own_words: str,
) -> None:
    error = AppUnavailable(own_words or "x")
    english = failure_view(error, "A", EN)
    assert english.message == (
        '"A" is not available right now. Please try again in a moment.'
    )
    assert not CJK.search(english.message)  # no Chinese gloss beside the English
    chinese = failure_view(error, "A", ZH)
    assert chinese.message == "「A」现在不可用，请稍后再试。"
    assert "(" not in chinese.message  # no English gloss beside the Chinese
    assert english.detail == chinese.detail == (own_words or "x")  # folded away


def test_a_restarting_app_is_said_so_in_each_language() -> None:
    error = _unavailable("音乐", "music_app", "restarting", None)
    assert error.message == "app music_app is restarting" and not CJK.search(error.message)
    assert failure_view(error, "音乐", ZH).message == "「音乐」正在重启，请稍后再试。"
    assert failure_view(error, "Music", EN).message == (
        '"Music" is restarting. Please try again in a moment.'
    )
    starting = _unavailable("Music", "music_app", "starting", None)
    assert failure_view(starting, "Music", EN).message.startswith('"Music" is starting')
    failed = _unavailable("Music", "music_app", "failed", "exit code 1")
    assert failure_view(failed, "Music", EN).message.startswith('"Music" is not available')
    assert failure_view(failed, "Music", EN).detail == (
        "app music_app is failed: exit code 1"
    )


def test_a_peers_chinese_message_reads_english_in_an_english_session(
    tmp_path: Path,
) -> None:
    def failing(body: dict[str, Any]) -> dict[str, Any]:
        raise AiosError("应用「B」出错了：数据库坏了", code="app_error")

    pipeline, _, _, _, _ = make_pipeline(
        tmp_path,
        {"a": lambda b: text_reply("fine"), "b": failing},
        [PlannedTask("t1", "a", "one"), PlannedTask("t2", "b", "two")],
    )
    english = pipeline.instruction(InstructionRequest(text="x", language=EN))
    failed = english.tasks[1].result
    assert failed.data["code"] == "app_error"
    assert failed.message == '"B" ran into a problem and could not finish this request.'
    assert not CJK.search(english.tasks[1].result.message)
    chinese = pipeline.instruction(InstructionRequest(text="x", language=ZH)).tasks[1]
    assert chinese.result.message == "「B」出错了，没能完成这次请求。"
    # the app's own reply is kept as the app sent it
    assert english.tasks[0].result.data == {"content": "fine"}


def test_overload_names_the_busy_app_or_the_system() -> None:
    admission = Admission(AdmissionSettings(max_app_calls=1, queue_wait=0.01))
    with (
        admission.app("music_app"),
        pytest.raises(Overloaded) as caught,
        admission.app("music_app"),
    ):
        pass
    assert not CJK.search(caught.value.message)
    assert user_message_of(caught.value, ZH) == "「music_app」正忙，请稍后再试。"
    assert user_message_of(Overloaded("the controller is busy"), EN) == (
        "The system is busy. Please try again shortly."
    )


def test_the_controllers_error_bodies_speak_the_readers_language(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path)
    client = app.test_client()

    def refused(**headers: str) -> dict[str, Any]:
        answer = client.post(
            "/api/instruction",
            data="{not json",
            content_type="application/json",
            headers={**H, **headers},
        )
        assert answer.status_code == 400
        return answer.get_json()["error"]

    english = refused(**{"Accept-Language": "en-US"})
    assert english["code"] == "invalid_request"
    assert english["user_message"] == "The request was not in a form the system can handle."
    assert english["message"].startswith("body is not valid JSON")  # the developer's
    british = refused(**{"Accept-Language": "en-GB,en;q=0.9"})
    assert british["user_message"] == english["user_message"]
    chinese = refused(**{"Accept-Language": "zh-CN"})
    assert chinese["user_message"] == "请求的格式不对，系统无法处理。"
    assert chinese["message"] == english["message"]
    # no language asked for: the settings' ui_language, else Chinese
    assert refused()["user_message"] == chinese["user_message"]
    french = refused(**{"Accept-Language": "fr-FR"})
    assert french["user_message"] == chinese["user_message"]
    client.put("/api/settings", json={"ui_language": "en-US"}, headers=H)
    assert refused()["user_message"] == english["user_message"]
    # an unknown route through the same handler
    missing = client.get("/api/nothing-here", headers=H).get_json()["error"]
    assert missing["code"] == "not_found"
    assert missing["user_message"] == "What was asked for could not be found."
