"""Voice input: espeak-ng speaks commands, pocketsphinx hears them through the grammar
built from the real manifests, and `/api/voice` routes them with the real router.

The instruction pipeline is the one stand-in: `handle_instruction` here routes with
the real `DeterministicRouter` over the real manifests and answers the
`InstructionResponse` shape without starting the apps. The online transcription
endpoint is a fake HTTP server on 127.0.0.1 (the real one is outside this machine).
"""

from __future__ import annotations

import io
import json
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from pydantic import ValidationError

from aios_protocol.errors import AiosError
from aios_protocol.strings import user_message, user_message_of
from aios_runtime.edge import TOKEN_HEADER, create_service, start_server, token_matches
from aios_runtime.settings import Settings
from controller.routing.router import AppProfile, DeterministicRouter
from tests.voice.conftest import needs_espeak
from voice.input import (
    Recognizer,
    VoiceUnavailable,
    post_voice_file,
    voice_blueprint,
)

pytestmark = needs_espeak

# in "auto" Chinese needs Google's service, which the user has not agreed to here
ZH_UNAVAILABLE = user_message("voice_unavailable.needs_consent", "zh-CN")
NO_ZH_ENGINE = (
    "zh-CN needs Google's speech service, and the user has not agreed to send audio"
    " there: nothing was sent"
)

# phrase → the app it must reach
COMMANDS = {
    "say hello": "hello_app",
    "greet me": "hello_app",
    "open the music player": "music_app",
    "play some music": "music_app",
    "play music": "music_app",
    "run the code": "code_app",
    "show my python files": "code_app",
    "show system status": "system_agent",
}


class FakeInstructions:
    """`handle_instruction` over the real router; records what it was given."""

    def __init__(self, profiles: list[AppProfile]):
        self.profiles = profiles
        self.router = DeterministicRouter()
        self.calls: list[tuple[str, str | None, str]] = []

    def __call__(self, text: str, session_id: str | None, source: str) -> dict[str, Any]:
        self.calls.append((text, session_id, source))
        plan = self.router.route(text, self.profiles)
        return {
            "session_id": session_id or "s-voice",
            "message": plan.reason or "ok",
            "tasks": [
                {
                    "task_id": t.task_id,
                    "app_id": t.app_id,
                    "instruction": t.instruction,
                    "depends_on": t.depends_on,
                    "status": "done",
                }
                for t in plan.tasks
            ],
            "llm_calls": 0,
        }


def voice_app(recognizer: Recognizer, handle: FakeInstructions) -> Flask:
    app = create_service("voice-test", token_matches("tok"))
    app.register_blueprint(voice_blueprint(recognizer, handle))
    return app


def authed(app: Flask) -> Any:
    client = app.test_client()
    client.environ_base[f"HTTP_{TOKEN_HEADER.upper().replace('-', '_')}"] = "tok"
    return client


@pytest.fixture(scope="module")
def recognizer(profiles: list[AppProfile]) -> Recognizer:
    return Recognizer(Settings(), lambda: profiles)


@pytest.fixture
def handle(profiles: list[AppProfile]) -> FakeInstructions:
    return FakeInstructions(profiles)


@pytest.fixture
def client(recognizer: Recognizer, handle: FakeInstructions) -> Any:
    return authed(voice_app(recognizer, handle))


def post_wav(client: Any, data: bytes, **fields: str) -> Any:
    form: dict[str, Any] = {
        "audio": (io.BytesIO(data), "speech.wav", "audio/wav"),
        **fields,
    }
    return client.post("/api/voice", data=form, content_type="multipart/form-data")


# ------------------------------------------------------------------ recognition


@pytest.mark.parametrize(("phrase", "app_id"), COMMANDS.items())
def test_spoken_command_is_recognised_and_routed(
    client: Any,
    handle: FakeInstructions,
    spoken: Callable[[str], bytes],
    phrase: str,
    app_id: str,
) -> None:
    answer = post_wav(client, spoken(phrase), lang="en", session_id="s1")
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["transcript"] == phrase
    assert body["recognition"] == {"engine": "pocketsphinx", "lang": "en-US"}
    assert [t["app_id"] for t in body["tasks"]] == [app_id]
    assert body["session_id"] == "s1"
    assert handle.calls == [(phrase, "s1", "voice")]


def test_any_rate_and_channel_count_is_accepted(
    recognizer: Recognizer, spoken: Callable[[str], bytes], tmp_path: Path
) -> None:
    source = tmp_path / "in.wav"
    source.write_bytes(spoken("play some music"))
    for name, options in {
        "stereo44k.wav": ["-r", "44100", "-c", "2"],
        "mono48k24bit.wav": ["-r", "48000", "-b", "24"],
        "mono8k8bit.wav": ["-r", "8000", "-b", "8", "-e", "unsigned-integer"],
    }.items():
        target = tmp_path / name
        subprocess.run(["sox", str(source), *options, str(target)], check=True)
        heard = recognizer.recognize(target.read_bytes(), "en")
        assert heard.text in ("play some music", "play music"), name


def test_the_pure_python_conversion_hears_the_same(
    recognizer: Recognizer, spoken: Callable[[str], bytes], tmp_path: Path
) -> None:
    from voice.audio import pcm_from_wav

    source = tmp_path / "in.wav"
    source.write_bytes(spoken("run the code"))
    stereo = tmp_path / "stereo.wav"
    subprocess.run(["sox", str(source), "-r", "44100", "-c", "2", str(stereo)], check=True)
    for data in (source.read_bytes(), stereo.read_bytes()):
        audio = pcm_from_wav(data, use_sox=False)
        assert recognizer.recognize_pcm(audio, "en").text == "run the code"


def test_raw_wav_body_and_transcribe_only(
    client: Any, handle: FakeInstructions, spoken: Callable[[str], bytes]
) -> None:
    answer = client.post(
        "/api/voice/transcribe?lang=en", data=spoken("say hello"), content_type="audio/wav"
    )
    assert answer.status_code == 200
    assert answer.get_json() == {
        "transcript": "say hello",
        "engine": "pocketsphinx",
        "lang": "en-US",
    }
    assert handle.calls == []  # the page sends it itself after showing it


# ------------------------------------------------------------------ languages


def test_chinese_without_an_engine_says_so_plainly(
    client: Any,
    recognizer: Recognizer,
    handle: FakeInstructions,
    spoken: Callable[[str], bytes],
) -> None:
    with pytest.raises(VoiceUnavailable) as caught:
        recognizer.recognize(spoken("say hello"), "zh-CN")
    assert caught.value.message == NO_ZH_ENGINE  # the developer's words
    assert user_message_of(caught.value, "zh-CN") == ZH_UNAVAILABLE  # the user's
    answer = post_wav(client, spoken("say hello"))  # no lang: default_voice is zh-CN
    assert answer.status_code == 503
    assert answer.get_json()["error"] == {
        "code": "voice_unavailable",
        "message": NO_ZH_ENGINE,
        "user_message": ZH_UNAVAILABLE,  # the why of each engine folded away:
        "detail": "openai: no voice_api_key configured for the online transcription"
        " endpoint; google: the user has not agreed to send audio to Google's speech"
        " service",
        # what chooses and fills the reader's sentence, for a peer in another language
        "variant": "needs_consent",
        "placeholders": {"lang": "zh-CN"},
    }
    assert handle.calls == []


def test_status_says_which_languages_can_be_served(client: Any) -> None:
    status = client.get("/api/voice/status").get_json()
    assert status["engine"] == "auto" and status["default_language"] == "zh-CN"
    languages = {row["lang"]: row for row in status["languages"]}
    assert languages["zh-CN"]["available"] is False
    assert languages["zh-CN"]["message"] == ZH_UNAVAILABLE
    assert languages["en-US"] == {
        "lang": "en-US",
        "engines": ["pocketsphinx"],
        "message": None,
        "available": True,
        "needs_consent": False,
    }
    engines = {row["name"]: row for row in status["engines"]}
    assert (
        engines["openai"]["available"] is False
        and "voice_api_key" in engines["openai"]["reason"]
    )
    assert status["browser_speech"] is True


def test_grammar_from_the_real_manifests(recognizer: Recognizer) -> None:
    grammar = recognizer.engines()[1].grammar()  # type: ignore[attr-defined]
    assert {"say hello", "play some music", "run the code"} <= set(grammar.examples)
    assert "music player" in grammar.keywords
    assert "public <command>" in grammar.jsgf
    assert not any(ord(ch) > 127 for ch in grammar.jsgf)  # Chinese is left out


def test_unusable_settings_name_the_key() -> None:
    with pytest.raises(ValidationError, match="voice_engine"):
        Settings(voice_engine="siri")
    assert Recognizer(Settings(voice_engine=" OpenAI ")).config.engine == "openai"


def test_no_english_commands_means_no_offline_engine(
    spoken: Callable[[str], bytes],
) -> None:
    chinese_only = [AppProfile("zh_app", "中文", keywords=("你好",), examples=("你好",))]
    recognizer = Recognizer(Settings(voice_engine="pocketsphinx"), lambda: chinese_only)
    assert recognizer.support("en").available is False
    with pytest.raises(VoiceUnavailable):
        recognizer.recognize(spoken("say hello"), "en")


def test_microphone_without_pyaudio_is_a_clear_error(client: Any) -> None:
    pytest.importorskip("speech_recognition")
    try:
        import pyaudio  # noqa: F401

        pytest.skip("PyAudio is installed here")
    except ImportError:
        pass
    answer = client.post("/api/voice/listen?lang=en")
    assert answer.status_code == 503
    error = answer.get_json()["error"]
    assert error["code"] == "voice_unavailable" and "PyAudio" in error["message"]


# ------------------------------------------------------------------ bad input


def test_bad_uploads_are_refused(client: Any, handle: FakeInstructions) -> None:
    answer = post_wav(client, b"not a wav at all" * 10)
    assert (
        answer.status_code == 400 and answer.get_json()["error"]["code"] == "invalid_audio"
    )
    answer = client.post(
        "/api/voice", data={"lang": "en"}, content_type="multipart/form-data"
    )
    assert answer.status_code == 400 and "audio" in answer.get_json()["error"]["message"]
    answer = client.post("/api/voice", json={"audio": "x"})
    assert answer.status_code == 415
    assert voice_app_without_token_refuses(client)
    assert handle.calls == []


def voice_app_without_token_refuses(client: Any) -> bool:
    bare = client.application.test_client()
    return bare.get("/api/voice/status").status_code == 403


def test_silence_is_not_understood(client: Any, tmp_path: Path) -> None:
    silence = tmp_path / "silence.wav"
    subprocess.run(
        ["sox", "-n", "-r", "16000", "-c", "1", str(silence), "trim", "0", "1"], check=True
    )
    answer = post_wav(client, silence.read_bytes(), lang="en")
    assert answer.status_code == 422
    assert answer.get_json()["error"]["code"] == "voice_not_understood"
    assert answer.get_json()["error"]["user_message"] == "没有听清，请再说一遍。"


def test_errors_and_status_follow_the_readers_language(
    recognizer: Recognizer,
    handle: FakeInstructions,
    spoken: Callable[[str], bytes],
    tmp_path: Path,
) -> None:
    """`language_for(session_id)`: the session's language, else the settings'."""
    app = create_service("voice-test", token_matches("tok"))
    sessions = {"sess_english1": "en-US"}
    app.register_blueprint(
        voice_blueprint(recognizer, handle, lambda sid: sessions.get(sid or "", "zh-CN"))
    )
    client = authed(app)
    answer = post_wav(client, spoken("say hello"), session_id="sess_english1")
    assert answer.status_code == 503  # zh-CN speech: no engine
    error = answer.get_json()["error"]
    assert error["user_message"].startswith("Nothing was sent")
    assert error["detail"].startswith("openai: no voice_api_key")
    assert post_wav(client, spoken("say hello")).get_json()["error"]["user_message"] == (
        ZH_UNAVAILABLE
    )
    silence = tmp_path / "silence.wav"
    subprocess.run(
        ["sox", "-n", "-r", "16000", "-c", "1", str(silence), "trim", "0", "1"], check=True
    )
    answer = post_wav(client, silence.read_bytes(), lang="en", session_id="sess_english1")
    assert answer.get_json()["error"]["user_message"] == (
        "Not understood. Please say one of the apps' commands."
    )
    sessions[""] = "en-US"  # the status has no session: the settings' language
    status = client.get("/api/voice/status").get_json()
    zh = next(row for row in status["languages"] if row["lang"] == "zh-CN")
    assert zh["message"].startswith("Nothing was sent")
    assert recognizer.support("zh-CN").message == ZH_UNAVAILABLE  # outside a request


# ------------------------------------------------------------------ online engine


class FakeTranscriptions:
    """An OpenAI-compatible `/v1/audio/transcriptions` on 127.0.0.1."""

    def __init__(self, text: str):
        self.text = text
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                fake.requests.append(
                    {
                        "path": self.path,
                        "auth": self.headers.get("Authorization"),
                        "type": self.headers.get("Content-Type", ""),
                        "body": body,
                    }
                )
                payload = json.dumps({"text": fake.text}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_transcriptions() -> Iterator[FakeTranscriptions]:
    fake = FakeTranscriptions("帮我播放周杰伦的歌")
    try:
        yield fake
    finally:
        fake.close()


def test_chinese_through_the_online_endpoint(
    fake_transcriptions: FakeTranscriptions,
    profiles: list[AppProfile],
    handle: FakeInstructions,
    spoken: Callable[[str], bytes],
) -> None:
    settings = Settings(
        voice_api_key="sk-test", voice_api_base_url=fake_transcriptions.base_url
    )
    recognizer = Recognizer(settings, lambda: profiles)
    assert recognizer.support("zh-CN").engines == ("openai",)
    client = authed(voice_app(recognizer, handle))
    answer = post_wav(client, spoken("play some music"), lang="zh-CN")
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["transcript"] == "帮我播放周杰伦的歌"
    assert body["recognition"] == {"engine": "openai", "lang": "zh-CN"}
    assert [t["app_id"] for t in body["tasks"]] == ["music_app"]
    (sent,) = fake_transcriptions.requests
    assert sent["path"] == "/v1/audio/transcriptions"
    assert sent["auth"] == "Bearer sk-test"
    assert sent["type"].startswith("multipart/form-data")
    assert b'name="language"\r\n\r\nzh' in sent["body"]
    assert b'name="model"\r\n\r\nwhisper-1' in sent["body"]
    assert b"RIFF" in sent["body"] and b"WAVE" in sent["body"]


def test_english_falls_back_offline_when_the_endpoint_is_down(
    profiles: list[AppProfile], spoken: Callable[[str], bytes]
) -> None:
    fake = FakeTranscriptions("unused")
    down_url = fake.base_url
    fake.close()  # nothing listens there any more
    settings = Settings(voice_api_key="sk-test", voice_api_base_url=down_url)
    recognizer = Recognizer(settings, lambda: profiles)
    heard = recognizer.recognize(spoken("run the code"), "en")
    assert (heard.engine, heard.text) == ("pocketsphinx", "run the code")
    with pytest.raises(VoiceUnavailable):
        recognizer.recognize(spoken("run the code"), "zh-CN")


# ------------------------------------------------------------------ the CLI path


def test_cli_posts_a_file_to_a_running_service(
    recognizer: Recognizer,
    handle: FakeInstructions,
    spoken: Callable[[str], bytes],
    tmp_path: Path,
) -> None:
    server = start_server(voice_app(recognizer, handle), 0)
    try:
        path = tmp_path / "command.wav"
        path.write_bytes(spoken("say hello"))
        body = post_voice_file(server.url, "tok", path, lang="en")
        assert body["transcript"] == "say hello"
        assert [t["app_id"] for t in body["tasks"]] == ["hello_app"]
        with pytest.raises(AiosError) as caught:
            post_voice_file(server.url, "tok", path)  # zh-CN: no engine
        assert caught.value.code == "voice_unavailable"
        assert caught.value.message == NO_ZH_ENGINE
    finally:
        server.stop()
