"""Chinese speech through Google's free speech service,
against a local fake of that service: audio goes there only after the user's yes,
English stays offline, and the voice language follows the desktop's language until
the user picks one.

The fake (`tests.fakes.google_speech`) answers in Google's format on 127.0.0.1; the
settings' `voice_google_url` points SpeechRecognition's `recognize_google` at it.
"""

from __future__ import annotations

import io
import json
import struct
import wave
from pathlib import Path
from typing import Any

import pytest

from aios_protocol.strings import user_message
from aios_runtime.settings import GOOGLE_SPEECH_URL, Settings, load_settings
from controller.routing.router import AppProfile
from controller.settings_store import SettingsStore
from tests.fakes.google_speech import FakeGoogleSpeech
from tests.voice.conftest import GOOGLE_HEARD as HEARD
from tests.voice.test_voice import FakeInstructions, authed, post_wav, voice_app
from voice.input import Recognizer

pytest.importorskip("speech_recognition")


def tone_wav(seconds: float = 0.4, rate: int = 16000) -> bytes:
    """A short square wave: the fake does not listen, it only has to be sent audio."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(
            b"".join(
                struct.pack("<h", 3000 if (i // 40) % 2 else -3000)
                for i in range(int(seconds * rate))
            )
        )
    return out.getvalue()


def recognizer_for(
    fake: FakeGoogleSpeech, profiles: list[AppProfile], **settings: Any
) -> Recognizer:
    return Recognizer(Settings(voice_google_url=fake.url, **settings), lambda: profiles)


def test_the_service_is_googles_unless_told_otherwise() -> None:
    assert Settings().voice_google_url == GOOGLE_SPEECH_URL
    assert Settings().voice_google_consent is False


def test_after_the_yes_chinese_goes_to_the_google_endpoint(
    google: FakeGoogleSpeech, profiles: list[AppProfile]
) -> None:
    recognizer = recognizer_for(google, profiles, voice_google_consent=True)
    assert recognizer.support("zh-CN").engines == ("google",)
    handle = FakeInstructions(profiles)
    answer = post_wav(authed(voice_app(recognizer, handle)), tone_wav(), lang="zh-CN")
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["transcript"] == HEARD
    assert body["recognition"] == {"engine": "google", "lang": "zh-CN"}
    assert [t["app_id"] for t in body["tasks"]] == ["hello_app"]
    assert handle.calls == [(HEARD, None, "voice")]
    (sent,) = google.requests
    assert sent["path"] == "/speech-api/v2/recognize"
    assert sent["lang"] == "zh-CN"
    assert sent["type"] == "audio/x-flac; rate=16000"
    assert sent["body"][:4] == b"fLaC"


def test_without_the_yes_nothing_is_sent_and_the_reply_says_so(
    google: FakeGoogleSpeech, profiles: list[AppProfile]
) -> None:
    recognizer = recognizer_for(google, profiles)
    handle = FakeInstructions(profiles)
    client = authed(voice_app(recognizer, handle))
    answer = post_wav(client, tone_wav(), lang="zh-CN")
    assert answer.status_code == 503
    error = answer.get_json()["error"]
    assert error["variant"] == "needs_consent"
    assert error["user_message"] == user_message("voice_unavailable.needs_consent", "zh-CN")
    assert error["user_message"].startswith("没有发送任何声音")
    assert google.requests == [] and handle.calls == []
    status = client.get("/api/voice/status").get_json()
    zh = next(row for row in status["languages"] if row["lang"] == "zh-CN")
    assert zh["needs_consent"] is True and zh["available"] is False
    assert status["google_consent"] is False
    english = user_message("voice_unavailable.needs_consent", "en-US")
    assert english.startswith("Nothing was sent")
    assert recognizer.support("zh-CN", "en-US").message == english


def test_english_stays_offline_after_the_yes(
    google: FakeGoogleSpeech, profiles: list[AppProfile]
) -> None:
    recognizer = recognizer_for(google, profiles, voice_google_consent=True)
    assert recognizer.support("en-US").engines == ("pocketsphinx",)
    status = recognizer.status("en-US")
    english = next(row for row in status["languages"] if row["lang"] == "en-US")
    assert english["engines"] == ["pocketsphinx"] and english["needs_consent"] is False


def test_the_yes_withdrawn_in_settings_stops_sending(
    google: FakeGoogleSpeech, profiles: list[AppProfile], tmp_path: Path
) -> None:
    store = SettingsStore(tmp_path / "settings.json", Settings(voice_google_url=google.url))
    recognizer = Recognizer(store.get(), lambda: profiles)
    store.subscribe(recognizer.configure)
    store.update({"voice_google_consent": True})
    assert recognizer.recognize(tone_wav(), "zh-CN").text == HEARD
    saved = json.loads((tmp_path / "settings.json").read_text(encoding="utf-8"))
    assert saved["voice_google_consent"] is True  # remembered
    # withdrawn in Settings, at once: no restart is said to be needed
    assert store.update({"voice_google_consent": False})["restart_needed"] is False
    assert recognizer.support("zh-CN").needs_consent is True
    assert len(google.requests) == 1


# ------------------------------------------------------------------ which language


def test_the_voice_language_follows_the_desktops_language(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json", Settings())
    recognizer = Recognizer(store.get())
    store.subscribe(recognizer.configure)
    assert recognizer.config.default_language == "zh-CN"
    store.update({"ui_language": "en-US"})
    assert store.get().voice_language == "en-US"
    assert recognizer.config.default_language == "en-US"
    assert recognizer.status()["default_language"] == "en-US"


def test_a_voice_the_user_picked_stays(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json", Settings())
    store.update({"default_voice": "zh-CN", "voice_follows_desktop": False})
    store.update({"ui_language": "en-US"})
    assert store.get().voice_language == "zh-CN"
    # a voice picked before the voice could follow is still the user's choice
    user = tmp_path / "old.json"
    user.write_text(json.dumps({"default_voice": "ja-JP", "ui_language": "en-US"}))
    assert load_settings(None, {}, user=user).voice_language == "ja-JP"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"default_voice": "zh-CN", "ui_language": "en-US"}))
    assert load_settings(config, {}).voice_language == "en-US"  # shipped, not picked
