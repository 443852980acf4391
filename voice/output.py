"""Voice output: speak replies and notices without ever blocking the caller.

`Speaker.say(text)` hands the text to one worker thread and returns at once; one
utterance plays at a time and a new one interrupts the old (only the latest waiting
text is kept). The voice comes from `default_voice` (zh-CN → espeak-ng's Mandarin
voice `cmn`; en → `en-us`), the rate from `voice_rate` (a multiple of espeak-ng's
normal 175 words per minute, so 0.9 is slightly slower). `voice_muted` (a
`config.json` key, default false) is the starting state of the mute toggle.

Why synthesis and playback are split: pyttsx3 (the chosen dependency; it drives
espeak-ng's library on Linux) synthesises well, but its own `say()` plays through a
blocking `os.system("aplay …")` inside the library's callback, which nothing can
interrupt. So pyttsx3 writes each utterance to a WAV (`save_to_file`) and a player
subprocess (`aplay`, `paplay` or sox's `play`) that we can kill plays it. Where
pyttsx3 cannot start, the `espeak-ng` command writes the WAV instead. No player, or
no audio device, means silence and a log line, never an exception.

`speech_blueprint(speaker)` serves the mute toggle, `say`, and server-side TTS as a
WAV for a browser page.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Protocol

from flask import Blueprint, Response, jsonify, request
from pydantic import BaseModel, ConfigDict, Field

from aios_protocol.errors import AiosError, InvalidRequest
from aios_runtime.edge import read_json
from aios_runtime.settings import Settings

__all__ = [
    "CommandPlayer",
    "EspeakSynthesizer",
    "MAX_TEXT",
    "MuteRequest",
    "NORMAL_RATE_WPM",
    "Playback",
    "Player",
    "Pyttsx3Synthesizer",
    "SayRequest",
    "SpeakEventSource",
    "Speaker",
    "SpeechUnavailable",
    "Synthesizer",
    "WELCOME",
    "default_synthesizer",
    "espeak_voice",
    "follow_speak_events",
    "rate_wpm",
    "speech_blueprint",
]

log = logging.getLogger("aios.voice.output")

WELCOME = "欢迎使用 Triton AIOS"
NORMAL_RATE_WPM = 175  # espeak-ng's default speaking rate
MAX_TEXT = 2000
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


class SpeechUnavailable(AiosError):
    code = "speech_unavailable"
    http_status = 503


def espeak_voice(language: str) -> str:
    """The espeak-ng voice name for a language tag ("zh-CN" → "cmn")."""
    lowered = language.strip().lower().replace("_", "-")
    if lowered.startswith(("zh", "cmn")):
        return "cmn"
    if lowered in ("en-gb", "en-uk"):
        return "en"
    if lowered.startswith("en"):
        return "en-us"
    return lowered.split("-")[0] or "en-us"


def _voice_for(text: str, language: str) -> str:
    """The configured voice, unless it cannot read the text (Chinese in an English voice)."""
    voice = espeak_voice(language)
    if voice != "cmn" and _CJK.search(text):
        return "cmn"
    return voice


def rate_wpm(voice_rate: float) -> int:
    return max(80, min(450, round(NORMAL_RATE_WPM * voice_rate)))


# ------------------------------------------------------------- synthesis


class Synthesizer(Protocol):
    name: str

    def synthesize(self, text: str, voice: str, rate: int, path: Path) -> None:
        """Write `text` spoken by `voice` at `rate` words per minute to a WAV at `path`."""
        ...


class EspeakSynthesizer:
    """The `espeak-ng` command (`-w FILE`); text goes in on stdin, never as an option."""

    name = "espeak-ng"

    def __init__(self, executable: str | None = None):
        self._executable = executable or shutil.which("espeak-ng") or shutil.which("espeak")

    @property
    def available(self) -> bool:
        return self._executable is not None

    def synthesize(self, text: str, voice: str, rate: int, path: Path) -> None:
        if self._executable is None:
            raise SpeechUnavailable(
                "espeak-ng is not installed (apt-get install espeak-ng)"
            )
        command = [
            self._executable,
            "-v",
            voice,
            "-s",
            str(rate),
            "-w",
            str(path),
            "--stdin",
        ]
        try:
            done = subprocess.run(
                command, input=text.encode("utf-8"), capture_output=True, timeout=60
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SpeechUnavailable(f"espeak-ng failed: {exc}") from exc
        if done.returncode != 0 or not path.exists():
            reason = done.stderr.decode("utf-8", "replace").strip()
            raise SpeechUnavailable(f"espeak-ng failed: {reason or done.returncode}")


def _quiet(*_args: Any, **_kwargs: Any) -> None:
    return None


class Pyttsx3Synthesizer:
    """pyttsx3 (espeak-ng's library on Linux) writing WAVs; espeak-ng's command if it fails.

    pyttsx3's engine is one per process and not thread-safe: a lock serialises it.
    """

    name = "pyttsx3"

    def __init__(self, fallback: EspeakSynthesizer | None = None):
        self._lock = threading.Lock()
        self._engine: Any = None
        self._voices: set[str] = set()
        self._failed: str | None = None
        self._fallback = fallback or EspeakSynthesizer()

    def _ensure_engine(self) -> Any:
        if self._engine is None and self._failed is None:
            try:
                import pyttsx3
                import pyttsx3.drivers.espeak as espeak_driver

                # The driver prints "Audio saved to …" for every file; silence that
                # module's print only (never swap the process-wide stdout).
                espeak_driver.print = _quiet
                engine = pyttsx3.init()
                voices = engine.getProperty("voices") or []
                self._voices = {str(v.id).rsplit("/", 1)[-1].lower() for v in voices}
                self._engine = engine
            except Exception as exc:  # no espeak library, no driver: use the command
                self._failed = f"{type(exc).__name__}: {exc}"
                log.warning("pyttsx3 unavailable (%s); using the espeak-ng command", exc)
        return self._engine

    def synthesize(self, text: str, voice: str, rate: int, path: Path) -> None:
        with self._lock:
            engine = self._ensure_engine()
            if engine is not None:
                if voice not in self._voices:
                    voice = "en-us" if "en-us" in self._voices else voice
                engine.setProperty("voice", voice)
                engine.setProperty("rate", rate)
                engine.save_to_file(text, str(path))
                engine.runAndWait()
                if path.exists() and path.stat().st_size > 44:
                    return
                log.warning("pyttsx3 wrote no audio; using the espeak-ng command")
        self._fallback.synthesize(text, voice, rate, path)


def default_synthesizer() -> Synthesizer:
    try:
        import pyttsx3  # noqa: F401
    except ImportError:
        return EspeakSynthesizer()
    return Pyttsx3Synthesizer()


# ------------------------------------------------------------- playback


class Playback(Protocol):
    def wait(self) -> None:
        """Block until the sound ends or is stopped."""
        ...

    def stop(self) -> None: ...


class Player(Protocol):
    def play(self, path: Path) -> Playback: ...


class _FinishedPlayback:
    def wait(self) -> None:
        return None

    def stop(self) -> None:
        return None


class _ProcessPlayback:
    def __init__(self, process: subprocess.Popen[bytes]):
        self._process = process

    def wait(self) -> None:
        self._process.wait()

    def stop(self) -> None:
        if self._process.poll() is None:
            try:
                os.killpg(self._process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self._process.wait()


_PLAYER_COMMANDS = (("aplay", "-q"), ("paplay",), ("play", "-q"))


@dataclass
class CommandPlayer:
    """Plays a WAV with the first of aplay / paplay / sox's play that is installed."""

    command: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.command is None:
            for candidate in _PLAYER_COMMANDS:
                found = shutil.which(candidate[0])
                if found:
                    self.command = (found, *candidate[1:])
                    break
        self._warned = False

    def play(self, path: Path) -> Playback:
        if not self.command:
            if not self._warned:
                log.warning(
                    "no audio player (aplay, paplay, play) installed: speech is silent"
                )
                self._warned = True
            return _FinishedPlayback()
        try:
            process = subprocess.Popen(
                [*self.command, str(path)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            log.warning("cannot start %s: %s", self.command[0], exc)
            return _FinishedPlayback()
        return _ProcessPlayback(process)


# ------------------------------------------------------------- the speaker


class Speaker:
    """Speaks one utterance at a time on a worker thread; the newest text wins."""

    def __init__(
        self,
        settings: Settings,
        *,
        synthesizer: Synthesizer | None = None,
        player: Player | None = None,
    ):
        self._synthesizer = synthesizer or default_synthesizer()
        self._player = player or CommandPlayer()
        self._cond = threading.Condition()
        self._pending: str | None = None
        self._generation = 0
        self._playback: Playback | None = None
        self._busy = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self.utterances = 0  # utterances handed to the player (what tests count)
        self._muted = settings.voice_muted
        self.configure(settings)

    def configure(self, settings: Settings) -> None:
        """Apply `voice_language` / `voice_rate` (after `PUT /api/settings`)."""
        self.language = settings.voice_language
        self.rate = rate_wpm(settings.voice_rate)

    @property
    def muted(self) -> bool:
        return self._muted

    def set_muted(self, muted: bool) -> None:
        """Mute (also cutting off what is playing) or unmute."""
        self._muted = bool(muted)
        if self._muted:
            self.stop()

    def say(self, text: str) -> bool:
        """Queue `text` (interrupting what is playing); False when muted or empty."""
        text = (text or "").strip()[:MAX_TEXT]
        if self._muted or not text or self._closed:
            return False
        with self._cond:
            self._generation += 1
            self._pending = text
            if self._playback is not None:
                self._playback.stop()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="aios-speaker", daemon=True
                )
                self._thread.start()
            self._cond.notify_all()
        return True

    def welcome(self) -> bool:
        return self.say(WELCOME)

    def status(self) -> dict[str, Any]:
        """Mute state and what will speak: the page speaks itself when `player` is None."""
        if isinstance(self._player, CommandPlayer):
            command = self._player.command
            player = Path(command[0]).name if command else None
        else:
            player = type(self._player).__name__
        return {
            "muted": self._muted,
            "synthesizer": self._synthesizer.name,
            "player": player,
            "language": self.language,
            "rate": self.rate,
        }

    def stop(self) -> None:
        """Cut off what is playing and drop what is waiting."""
        with self._cond:
            self._generation += 1
            self._pending = None
            if self._playback is not None:
                self._playback.stop()
            self._cond.notify_all()

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until nothing is waiting or playing (tests, shutdown)."""
        with self._cond:
            return self._cond.wait_for(
                lambda: self._pending is None and not self._busy, timeout=timeout
            )

    def close(self) -> None:
        self.stop()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def save(self, text: str, path: str | Path, language: str | None = None) -> Path:
        """Write `text` spoken to a WAV at `path` (synchronously; ignores mute)."""
        text = (text or "").strip()
        if not text:
            raise InvalidRequest("text is empty")
        target = Path(path)
        voice = _voice_for(text, language or self.language)
        self._synthesizer.synthesize(text[:MAX_TEXT], voice, self.rate, target)
        return target

    def wav_bytes(self, text: str, language: str | None = None) -> bytes:
        with tempfile.TemporaryDirectory(prefix="aios-tts-") as tmp:
            return self.save(text, Path(tmp) / "speech.wav", language).read_bytes()

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._pending is not None or self._closed)
                if self._closed:
                    return
                text, generation = self._pending, self._generation
                self._pending = None
                self._busy = True
            try:
                assert text is not None
                self._speak(text, generation)
            except Exception:
                log.exception("speech failed")
            finally:
                with self._cond:
                    self._busy = False
                    self._playback = None
                    self._cond.notify_all()

    def _speak(self, text: str, generation: int) -> None:
        with tempfile.TemporaryDirectory(prefix="aios-tts-") as tmp:
            path = Path(tmp) / "utterance.wav"
            self._synthesizer.synthesize(
                text, _voice_for(text, self.language), self.rate, path
            )
            with self._cond:
                if generation != self._generation or self._muted:
                    return  # superseded while it was being synthesised
                playback = self._player.play(path)
                self._playback = playback
                self.utterances += 1
            playback.wait()


# ------------------------------------------------------------- events


class SpeakEventSource(Protocol):
    """What `controller.events.EventBus` offers a subscriber."""

    @property
    def last_seq(self) -> int: ...

    @property
    def closed(self) -> bool: ...

    def wait_since(self, seq: int, timeout: float) -> list[Any]: ...


def follow_speak_events(bus: SpeakEventSource, speaker: Speaker) -> threading.Thread:
    """Speak the `text` of every `speak` event published from now on.

    A daemon thread; it ends when the bus is closed. Replies that follow each other
    quickly interrupt each other: the latest one is heard in full.
    """

    def follow() -> None:
        seq = bus.last_seq
        while not bus.closed:
            for event in bus.wait_since(seq, 1.0):
                seq = max(seq, event.seq)
                if event.type == "speak":
                    speaker.say(str((event.data or {}).get("text") or ""))

    thread = threading.Thread(target=follow, name="aios-speak-events", daemon=True)
    thread.start()
    return thread


# ------------------------------------------------------------- HTTP


class MuteRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    muted: bool


class SayRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]


def speech_blueprint(speaker: Speaker) -> Blueprint:
    """Routes for voice output; register on the controller's `create_service` app.

    - `GET /api/speech/mute` → `{"muted": bool}`; `POST` with `{"muted": bool}` sets it.
    - `POST /api/speech/say` `{"text": ...}` → `{"spoken": bool, "muted": bool}`.
    - `GET /api/speech/status` → `Speaker.status()` (`player` None: nothing can play
      sound here, so the page should speak itself).
    - `GET /api/speech/wav?text=…[&lang=en]` → the text spoken, as `audio/wav`.
    """
    bp = Blueprint("speech", __name__)

    @bp.get("/api/speech/mute")
    def get_mute() -> Any:
        return jsonify({"muted": speaker.muted})

    @bp.post("/api/speech/mute")
    def set_mute() -> Any:
        speaker.set_muted(read_json(MuteRequest).muted)
        return jsonify({"muted": speaker.muted})

    @bp.get("/api/speech/status")
    def status() -> Any:
        return jsonify(speaker.status())

    @bp.post("/api/speech/say")
    def say() -> Any:
        spoken = speaker.say(read_json(SayRequest).text)
        return jsonify({"spoken": spoken, "muted": speaker.muted})

    @bp.get("/api/speech/wav")
    def wav() -> Response:
        text = request.args.get("text", "").strip()
        if not text:
            raise InvalidRequest("query parameter 'text' is required")
        if len(text) > MAX_TEXT:
            raise InvalidRequest(f"text longer than {MAX_TEXT} characters")
        data = speaker.wav_bytes(text, request.args.get("lang") or None)
        response = Response(data, mimetype="audio/wav")
        response.headers["Cache-Control"] = "no-store"
        return response

    return bp
