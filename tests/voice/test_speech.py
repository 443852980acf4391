"""Voice output: real espeak-ng synthesis to WAV, the speaker's worker, mute, the routes.

Playback is the one thing replaced: a recording player stands in for the sound card
(none exists here), so the tests can see what would have been played, and when a
playback was cut off. Synthesis is real (pyttsx3 driving espeak-ng).
"""

from __future__ import annotations

import io
import shutil
import subprocess
import threading
import wave
from pathlib import Path

import pytest

from aios_runtime.edge import TOKEN_HEADER, create_service, token_matches
from aios_runtime.settings import Settings
from controller.events import EventBus
from tests.voice.conftest import needs_espeak
from voice.output import (
    WELCOME,
    CommandPlayer,
    EspeakSynthesizer,
    Pyttsx3Synthesizer,
    Speaker,
    espeak_voice,
    follow_speak_events,
    rate_wpm,
    speech_blueprint,
)

pytestmark = needs_espeak


def wav_frames(data: bytes) -> int:
    with wave.open(io.BytesIO(data), "rb") as reader:
        return reader.getnframes()


class RecordingPlayback:
    def __init__(self, block: bool):
        self.started = threading.Event()
        self.stopped = threading.Event()
        self._block = block

    def wait(self) -> None:
        self.started.set()
        if self._block:
            self.stopped.wait(30)

    def stop(self) -> None:
        self.stopped.set()


class RecordingPlayer:
    """Keeps the frames of every WAV it is asked to play; can hold a playback open."""

    def __init__(self, block: bool = False):
        self.block = block
        self.played: list[int] = []
        self.playbacks: list[RecordingPlayback] = []

    def play(self, path: Path) -> RecordingPlayback:
        self.played.append(wav_frames(path.read_bytes()))
        playback = RecordingPlayback(self.block)
        self.playbacks.append(playback)
        return playback


class CountingSynthesizer:
    """The real synthesiser, counting calls and remembering texts and voices."""

    name = "counting"

    def __init__(self) -> None:
        self.inner = Pyttsx3Synthesizer()
        self.calls: list[tuple[str, str, int]] = []

    def synthesize(self, text: str, voice: str, rate: int, path: Path) -> None:
        self.calls.append((text, voice, rate))
        self.inner.synthesize(text, voice, rate, path)


@pytest.fixture
def player() -> RecordingPlayer:
    return RecordingPlayer()


@pytest.fixture
def synth() -> CountingSynthesizer:
    return CountingSynthesizer()


@pytest.fixture
def speaker(synth: CountingSynthesizer, player: RecordingPlayer):
    speaker = Speaker(Settings(), synthesizer=synth, player=player)
    yield speaker
    speaker.close()


# ------------------------------------------------------------------ pure logic


def test_voice_and_rate_come_from_config() -> None:
    assert espeak_voice("zh-CN") == "cmn"
    assert espeak_voice("en") == "en-us"
    assert espeak_voice("en-US") == "en-us"
    assert rate_wpm(1.0) == 175
    assert rate_wpm(0.9) == 158  # slightly slower than espeak-ng's normal rate
    assert Speaker(Settings(), player=RecordingPlayer()).rate == 158


# ------------------------------------------------------------------ synthesis


@pytest.mark.parametrize(
    ("text", "language"),
    [(WELCOME, "zh-CN"), ("你好，音乐正在播放", "zh-CN"), ("The music is playing", "en")],
)
def test_save_writes_a_wav_with_frames(tmp_path: Path, text: str, language: str) -> None:
    speaker = Speaker(Settings(), player=RecordingPlayer())
    path = speaker.save(text, tmp_path / "out.wav", language)
    assert wav_frames(path.read_bytes()) > 10_000  # well over half a second of speech
    if shutil.which("soxi"):
        seconds = subprocess.run(
            ["soxi", "-D", str(path)], capture_output=True, text=True, check=True
        ).stdout
        assert float(seconds) > 0.5


def test_chinese_uses_the_mandarin_voice_and_english_the_english_one(
    tmp_path: Path, speaker: Speaker, synth: CountingSynthesizer
) -> None:
    speaker.save("欢迎", tmp_path / "a.wav")
    speaker.save("welcome", tmp_path / "b.wav", "en-US")
    speaker.save("播放音乐", tmp_path / "c.wav", "en-US")  # an English voice cannot read it
    assert [voice for _, voice, _ in synth.calls] == ["cmn", "en-us", "cmn"]
    assert {rate for _, _, rate in synth.calls} == {158}


def test_the_espeak_command_writes_the_same_kind_of_wav(tmp_path: Path) -> None:
    path = tmp_path / "cmd.wav"
    EspeakSynthesizer().synthesize("-v not an option, 欢迎", "cmn", 158, path)
    assert wav_frames(path.read_bytes()) > 0


# ------------------------------------------------------------------ the worker


def test_say_plays_one_wav_on_the_worker(speaker: Speaker, player: RecordingPlayer) -> None:
    assert speaker.welcome() is True
    assert speaker.wait_idle(30)
    assert len(player.played) == 1 and player.played[0] > 0
    assert speaker.utterances == 1


def test_muted_say_produces_nothing(
    speaker: Speaker, synth: CountingSynthesizer, player: RecordingPlayer
) -> None:
    speaker.set_muted(True)
    assert speaker.muted is True
    assert speaker.say("播放音乐") is False
    assert speaker.welcome() is False
    assert speaker.wait_idle(30)
    assert synth.calls == [] and player.played == [] and speaker.utterances == 0
    speaker.set_muted(False)
    assert speaker.say("播放音乐") is True
    assert speaker.wait_idle(30)
    assert len(player.played) == 1


def test_muted_from_config() -> None:
    speaker = Speaker(Settings(voice_muted=True), player=RecordingPlayer())
    assert speaker.muted is True and speaker.say("hello") is False


def test_a_new_utterance_interrupts_the_old(
    speaker: Speaker, synth: CountingSynthesizer, player: RecordingPlayer
) -> None:
    player.block = True
    speaker.say("first reply, a long one")
    assert _first_playback(player).started.wait(30)
    speaker.say("second reply")
    assert player.playbacks[0].stopped.wait(30)  # the first was cut off
    assert _nth_playback(player, 1).started.wait(30)
    speaker.stop()
    assert speaker.wait_idle(30)
    assert [text for text, _, _ in synth.calls] == [
        "first reply, a long one",
        "second reply",
    ]
    assert speaker.utterances == 2


def test_muting_cuts_off_what_is_playing(speaker: Speaker, player: RecordingPlayer) -> None:
    player.block = True
    speaker.say("a reply")
    assert _first_playback(player).started.wait(30)
    speaker.set_muted(True)
    assert player.playbacks[0].stopped.wait(30)
    assert speaker.wait_idle(30)


def _nth_playback(player: RecordingPlayer, n: int) -> RecordingPlayback:
    for _ in range(3000):
        if len(player.playbacks) > n:
            return player.playbacks[n]
        threading.Event().wait(0.01)
    raise AssertionError(f"playback {n} never started")


def _first_playback(player: RecordingPlayer) -> RecordingPlayback:
    return _nth_playback(player, 0)


def test_no_player_or_no_audio_device_is_silent_not_an_error() -> None:
    for player in (
        CommandPlayer(command=()),
        CommandPlayer(command=("/nonexistent/aplay",)),
    ):
        speaker = Speaker(Settings(), player=player)
        assert speaker.say("hello") is True
        assert speaker.wait_idle(30)
        assert speaker.utterances == 1
        speaker.close()


def test_a_real_player_without_a_sound_card_does_not_raise() -> None:
    player = CommandPlayer()  # aplay / paplay / play if installed; no device here
    speaker = Speaker(Settings(), player=player)
    assert speaker.say("hello") is True
    assert speaker.wait_idle(30)
    speaker.close()


def test_speak_events_are_spoken(speaker: Speaker, synth: CountingSynthesizer) -> None:
    bus = EventBus()
    follow_speak_events(bus, speaker)
    bus.publish("task_done", {"text": "not this"})
    bus.publish("speak", {"text": "已将播放按钮移到左上角"}, app_id="system_agent")
    for _ in range(3000):
        if synth.calls:
            break
        threading.Event().wait(0.01)
    assert speaker.wait_idle(30)
    bus.close()
    assert [text for text, _, _ in synth.calls] == ["已将播放按钮移到左上角"]


# ------------------------------------------------------------------ HTTP


@pytest.fixture
def client(speaker: Speaker):
    app = create_service("speech-test", token_matches("tok"), token_in_query=True)
    app.register_blueprint(speech_blueprint(speaker))
    client = app.test_client()
    client.environ_base[f"HTTP_{TOKEN_HEADER.upper().replace('-', '_')}"] = "tok"
    return client


def test_mute_toggle_route(client, speaker: Speaker, player: RecordingPlayer) -> None:
    assert client.get("/api/speech/mute").get_json() == {"muted": False}
    assert client.post("/api/speech/mute", json={"muted": True}).get_json() == {
        "muted": True
    }
    assert speaker.muted is True
    said = client.post("/api/speech/say", json={"text": "你好"}).get_json()
    assert said == {"spoken": False, "muted": True}
    assert client.post("/api/speech/mute", json={"muted": False}).get_json() == {
        "muted": False
    }
    said = client.post("/api/speech/say", json={"text": "你好"}).get_json()
    assert said == {"spoken": True, "muted": False}
    assert speaker.wait_idle(30)
    assert len(player.played) == 1


def test_status_route_says_what_speaks(client) -> None:
    status = client.get("/api/speech/status").get_json()
    assert status == {
        "muted": False,
        "synthesizer": "counting",
        "player": "RecordingPlayer",
        "language": "zh-CN",
        "rate": 158,
    }
    silent = Speaker(Settings(), player=CommandPlayer(command=()))
    assert silent.status()["player"] is None


def test_bad_bodies_are_refused(client) -> None:
    answer = client.post("/api/speech/mute", json={"muted": "yes"})
    assert answer.status_code == 400
    assert answer.get_json()["error"]["code"] == "invalid_request"
    assert client.post("/api/speech/say", json={"text": ""}).status_code == 400
    assert client.get("/api/speech/wav").status_code == 400


def test_wav_route_serves_server_side_speech(client) -> None:
    answer = client.get("/api/speech/wav", query_string={"text": "欢迎使用 Triton AIOS"})
    assert answer.status_code == 200
    assert answer.mimetype == "audio/wav"
    assert wav_frames(answer.data) > 0


def test_routes_need_the_token(speaker: Speaker) -> None:
    app = create_service("speech-test", token_matches("tok"), token_in_query=True)
    app.register_blueprint(speech_blueprint(speaker))
    client = app.test_client()
    assert client.get("/api/speech/mute").status_code == 403
    assert client.get("/api/speech/wav?text=hi&token=tok").status_code == 200
