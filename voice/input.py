"""Voice input: recorded speech → text → the controller's instruction path.

`Recognizer` picks a speech-to-text engine from config (`voice_engine`), says which
languages it can serve (`languages()`, `status()`), and turns a WAV of any format into
a `Transcript` or a clear error (`voice_unavailable`, `voice_not_understood`).
`voice_blueprint` serves it to the desktop and the CLI; `post_voice_file` is the
CLI's `aios say --audio FILE.wav`.

Config keys (typed in `aios_runtime.settings.Settings`, all optional):

| key | default | meaning |
|---|---|---|
| `voice_engine` | "auto" | "auto" (online endpoint when a key is set, then offline English, then Google for the languages pocketsphinx does not hear, such as Chinese), "pocketsphinx", "openai", "google", "browser" (the page uses its own speech API; uploads fall back to offline English) |
| `voice_api_key` | "" | key for the OpenAI-compatible transcription endpoint |
| `voice_api_base_url` | "https://api.openai.com/v1" | that endpoint's base URL |
| `voice_api_model` | "whisper-1" | the transcription model |
| `voice_google_consent` | false | the user's yes to sending audio to Google's speech service |
| `voice_google_url` | Google's | that service's URL |

The language defaults to the settings' `voice_language` (the desktop's, else
`default_voice`). No offline Chinese model exists here, so zh-CN needs an online
engine (Google's, after the user's yes) or the browser's speech API; without the yes
nothing is sent, and the error (`needs_consent`) and `status()` say so plainly. The
errors' messages are English, for developers; what the user reads is their code's
sentence (`aios_protocol.strings`) in the language they read (`language_for(session_id)`
of `voice_blueprint`: the session's, else the settings' `ui_language`): an error
body's `user_message`, the status's `message` and microphone `reason`. The technical reasons are in the error's `detail`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from flask import Blueprint, Response, jsonify, request

from aios_protocol.errors import AiosError, InvalidRequest, UnsupportedMediaType
from aios_protocol.messages import InstructionSource
from aios_protocol.strings import user_message_of
from aios_runtime.edge import json_error
from aios_runtime.settings import Settings, VoiceEngine
from controller.routing.router import AppProfile
from voice.audio import PcmAudio, pcm_from_wav
from voice.engines import (
    NO_CONSENT,
    GoogleEngine,
    OpenAITranscriptionEngine,
    PocketsphinxEngine,
    SpeechEngine,
    VoiceNotUnderstood,
    VoiceUnavailable,
    normalize_language,
)

__all__ = [
    "ENGINE_CHOICES",
    "LanguageSupport",
    "Recognizer",
    "Transcript",
    "VoiceConfig",
    "VoiceNotUnderstood",
    "VoiceUnavailable",
    "consent_error",
    "microphone_problem",
    "post_voice_file",
    "unavailable_error",
    "voice_blueprint",
]

ENGINE_CHOICES: tuple[str, ...] = get_args(VoiceEngine)
LISTED_LANGUAGES = ("zh-CN", "en-US")

# (text, session_id, source) -> the InstructionResponse as a dict
HandleInstruction = Callable[[str, "str | None", InstructionSource], dict[str, Any]]
GrammarSource = Callable[[], Sequence[AppProfile]]


@dataclass(frozen=True)
class Transcript:
    text: str
    engine: str
    lang: str


@dataclass(frozen=True)
class LanguageSupport:
    """Whether the server can recognise `lang`, with which engines, or why not:
    `problem` is the error a recording in `lang` meets, `message` its sentence in the
    language of the reader asked for."""

    lang: str
    engines: tuple[str, ...]
    problem: VoiceUnavailable | None = None
    message: str | None = None
    reasons: tuple[str, ...] = ()  # why each engine for `lang` cannot run (technical)
    needs_consent: bool = False  # Google would serve it after the user's yes

    @property
    def available(self) -> bool:
        return bool(self.engines)


@dataclass(frozen=True)
class VoiceConfig:
    """The voice keys of `config.json` the recognizer uses (defaults: `Settings`)."""

    engine: str
    api_key: str
    api_base_url: str
    api_model: str
    default_language: str
    google_url: str
    google_consent: bool

    @classmethod
    def from_settings(cls, settings: Settings) -> VoiceConfig:
        return cls(
            engine=settings.voice_engine,
            api_key=settings.voice_api_key,
            api_base_url=settings.voice_api_base_url,
            api_model=settings.voice_api_model,
            default_language=normalize_language(settings.voice_language),
            google_url=settings.voice_google_url,
            google_consent=settings.voice_google_consent,
        )


def unavailable_error(lang: str, reasons: Sequence[str] = ()) -> VoiceUnavailable:
    """The error when no engine can serve `lang` (`reasons`: why each engine cannot)."""
    chinese = lang.lower().startswith("zh")
    return VoiceUnavailable(
        f"no speech recognition engine can serve {lang} here",
        detail="; ".join(reasons) or None,
        variant="no_chinese_engine" if chinese else "no_engine",
        placeholders={"lang": lang},
    )


def consent_error(lang: str, reasons: Sequence[str] = ()) -> VoiceUnavailable:
    """The error when only the user's yes to Google's speech service is missing:
    nothing was sent."""
    return VoiceUnavailable(
        f"{lang} needs Google's speech service, and the user has not agreed to send"
        " audio there: nothing was sent",
        detail="; ".join(reasons) or None,
        variant="needs_consent",
        placeholders={"lang": lang},
    )


class Recognizer:
    """Chooses engines from config and recognises recorded commands.

    `grammar_source` returns the installed apps' profiles (the offline English
    grammar is built from them on each call, so hot-loaded apps are heard at once).
    `engines` replaces the configured engines (tests, or a custom engine).
    """

    def __init__(
        self,
        settings: Settings,
        grammar_source: GrammarSource | None = None,
        *,
        engines: Sequence[SpeechEngine] | None = None,
    ):
        self._grammar_source: GrammarSource = grammar_source or (lambda: [])
        self._offline = PocketsphinxEngine(self._grammar_source)
        self._fixed_engines = list(engines) if engines is not None else None
        self.configure(settings)

    def configure(self, settings: Settings) -> None:
        """Apply new settings (after `PUT /api/settings`)."""
        self.config = VoiceConfig.from_settings(settings)
        online = OpenAITranscriptionEngine(
            self.config.api_key, self.config.api_base_url, self.config.api_model
        )
        url, consent = self.config.google_url, self.config.google_consent
        beyond_offline = GoogleEngine(
            url, consent, serves_lang=lambda lang: not self._offline.serves(lang)
        )
        choices: dict[str, list[SpeechEngine]] = {
            "auto": [online, self._offline, beyond_offline],
            "pocketsphinx": [self._offline],
            "openai": [online],
            "google": [GoogleEngine(url, consent)],
            "browser": [self._offline],
        }
        self._engines = (
            self._fixed_engines
            if self._fixed_engines is not None
            else choices[self.config.engine]
        )

    def engines(self) -> list[SpeechEngine]:
        """The engines in use, in order of preference."""
        return list(self._engines)

    def _language(self, lang: str | None) -> str:
        return normalize_language(lang, self.config.default_language)

    def support(self, lang: str | None = None, reader: str = "zh-CN") -> LanguageSupport:
        """Whether `lang` can be recognised here; why not in `reader`'s language."""
        lang = self._language(lang)
        usable, reasons, waiting = [], [], False
        for engine in self._engines:
            if not engine.serves(lang):
                continue
            reason = engine.unavailable_reason()
            if reason is None:
                usable.append(engine.name)
            else:
                reasons.append(f"{engine.name}: {reason}")
                waiting = waiting or reason == NO_CONSENT
        if usable:
            return LanguageSupport(lang, tuple(usable), reasons=tuple(reasons))
        problem = (
            consent_error(lang, reasons) if waiting else unavailable_error(lang, reasons)
        )
        message = user_message_of(problem, reader)
        return LanguageSupport(lang, (), problem, message, tuple(reasons), waiting)

    def languages(self, reader: str = "zh-CN") -> list[LanguageSupport]:
        """Support for zh-CN, en-US and the configured default language."""
        langs = list(dict.fromkeys((self.config.default_language, *LISTED_LANGUAGES)))
        return [self.support(lang, reader) for lang in langs]

    def status(self, reader: str = "zh-CN") -> dict[str, Any]:
        """What `GET /api/voice/status` answers; the page decides its 🎤 path from it.
        Its sentences are in `reader`'s language."""
        engines = []
        for engine in self._engines:
            reason = engine.unavailable_reason()
            engines.append(
                {
                    "name": engine.name,
                    "offline": engine.offline,
                    "available": reason is None,
                    "reason": reason,
                    "languages": "en"
                    if engine.name == "pocketsphinx"
                    else ("all" if engine.serves("en-US") else "not en"),
                }
            )
        microphone = microphone_problem()
        return {
            "engine": self.config.engine,
            "default_language": self.config.default_language,
            "google_consent": self.config.google_consent,
            "engines": engines,
            "languages": [
                {
                    "lang": s.lang,
                    "engines": list(s.engines),
                    "message": s.message,
                    "available": s.available,
                    "needs_consent": s.needs_consent,
                }
                for s in self.languages(reader)
            ],
            # The page may use its own Web Speech API (when the browser has one).
            "browser_speech": self.config.engine in ("auto", "browser"),
            "microphone": {
                "available": microphone is None,
                "reason": user_message_of(microphone, reader) if microphone else None,
            },
        }

    def recognize(self, wav: bytes, lang: str | None = None) -> Transcript:
        """Recognise one recorded command (a WAV of any rate, channels, width)."""
        return self.recognize_pcm(pcm_from_wav(wav), lang)

    def recognize_pcm(self, audio: PcmAudio, lang: str | None = None) -> Transcript:
        lang = self._language(lang)
        support = self.support(lang)
        if support.problem is not None:
            raise support.problem
        last: AiosError | None = None
        by_name = {engine.name: engine for engine in self._engines}
        for name in support.engines:
            try:
                text = by_name[name].transcribe(audio, lang)
            except VoiceUnavailable as exc:  # e.g. network down: try the next engine
                last = exc
                continue
            return Transcript(text=text, engine=name, lang=lang)
        assert last is not None
        raise last

    def listen_once(
        self, lang: str | None = None, *, timeout: float = 5.0, phrase_limit: float = 10.0
    ) -> Transcript:
        """Record one utterance from the microphone (PyAudio) and recognise it."""
        problem = microphone_problem()
        if problem is not None:
            raise problem
        import speech_recognition as sr

        listener = sr.Recognizer()
        try:
            with sr.Microphone() as source:
                listener.adjust_for_ambient_noise(source, duration=0.3)
                audio = listener.listen(
                    source, timeout=timeout, phrase_time_limit=phrase_limit
                )
        except sr.WaitTimeoutError as exc:
            raise VoiceNotUnderstood(
                f"no speech within {timeout:g} s", variant="silence"
            ) from exc
        except (OSError, AttributeError) as exc:
            raise VoiceUnavailable(
                f"no microphone could be opened: {exc}",
                detail=str(exc),
                variant="no_microphone",
            ) from exc
        return self.recognize(audio.get_wav_data(), lang)


def microphone_problem() -> VoiceUnavailable | None:
    """None when server-side microphone capture can work; else the error it meets."""
    try:
        import speech_recognition  # noqa: F401
    except ImportError:
        return VoiceUnavailable(
            "microphone capture needs SpeechRecognition (pip install SpeechRecognition)",
            variant="needs_speech_recognition",
        )
    try:
        import pyaudio  # noqa: F401
    except ImportError:
        return VoiceUnavailable(
            "microphone capture needs PyAudio (pip install pyaudio)",
            variant="needs_pyaudio",
        )
    return None


# ---------------------------------------------------------------- HTTP

_WAV_TYPES = ("audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave")


def _uploaded_audio() -> tuple[bytes, str | None, str | None]:
    """(WAV bytes, lang, session_id) from multipart field `audio` or a raw WAV body."""
    mimetype = request.mimetype or ""
    if mimetype == "multipart/form-data":
        upload = request.files.get("audio")
        if upload is None:
            raise InvalidRequest("multipart field 'audio' (a WAV file) is required")
        data = upload.read()
        lang = request.form.get("lang") or request.args.get("lang")
        session_id = request.form.get("session_id") or request.args.get("session_id")
        return data, lang, session_id
    if mimetype in _WAV_TYPES:
        return request.get_data(), request.args.get("lang"), request.args.get("session_id")
    raise UnsupportedMediaType(
        "send multipart/form-data with field 'audio' (a WAV), or an audio/wav body"
    )


def _transcript_body(transcript: Transcript) -> dict[str, Any]:
    return {
        "transcript": transcript.text,
        "engine": transcript.engine,
        "lang": transcript.lang,
    }


def voice_blueprint(
    recognizer: Recognizer,
    handle_instruction: HandleInstruction,
    language_for: Callable[[str | None], str] = lambda session_id: "zh-CN",
) -> Blueprint:
    """Routes for voice input; register on the controller's `create_service` app.
    What the user reads (error bodies' `user_message`, the status's sentences) is in
    `language_for(session_id)`.

    - `POST /api/voice`: a WAV (multipart `audio`, optional `lang`, `session_id`) →
      the instruction response (sent with `source: "voice"`) plus `transcript` and
      `recognition` ({engine, lang}).
    - `POST /api/voice/transcribe`: the same upload → `{transcript, engine, lang}` only,
      so the page can show the text before it sends it as an instruction.
    - `POST /api/voice/listen?lang=`: one utterance from the server's microphone →
      `{transcript, engine, lang}` (503 `voice_unavailable` without PyAudio).
    - `GET /api/voice/status`: engines, languages, microphone (see `Recognizer.status`).
    """
    bp = Blueprint("voice", __name__)

    def reader() -> str:
        session_id = request.args.get("session_id")
        if not session_id and request.mimetype == "multipart/form-data":
            try:
                session_id = request.form.get("session_id")
            except Exception:  # a body refused (too large, malformed): no session
                session_id = None
        return language_for(session_id or None)

    @bp.errorhandler(AiosError)
    def voice_error(exc: AiosError) -> Response:
        return json_error(exc, reader())

    @bp.post("/api/voice")
    def voice_instruction() -> Any:
        data, lang, session_id = _uploaded_audio()
        transcript = recognizer.recognize(data, lang)
        reply = dict(handle_instruction(transcript.text, session_id or None, "voice"))
        reply["transcript"] = transcript.text
        reply["recognition"] = {"engine": transcript.engine, "lang": transcript.lang}
        return jsonify(reply)

    @bp.post("/api/voice/transcribe")
    def voice_transcribe() -> Any:
        data, lang, _ = _uploaded_audio()
        return jsonify(_transcript_body(recognizer.recognize(data, lang)))

    @bp.post("/api/voice/listen")
    def voice_listen() -> Any:
        transcript = recognizer.listen_once(request.args.get("lang"))
        return jsonify(_transcript_body(transcript))

    @bp.get("/api/voice/status")
    def voice_status() -> Any:
        return jsonify(recognizer.status(language_for(None)))

    return bp


def post_voice_file(
    base_url: str,
    token: str,
    path: str | Path,
    *,
    lang: str | None = None,
    session_id: str | None = None,
    timeout: float = 120.0,
) -> dict[str, Any]:
    """`aios say --audio FILE.wav`: send a recording to a running controller.

    Returns the `/api/voice` answer; an error answer becomes the `AiosError` it names.
    """
    import requests

    from aios_runtime.edge import TOKEN_HEADER

    data = Path(path).read_bytes()
    form = {k: v for k, v in (("lang", lang), ("session_id", session_id)) if v}
    with requests.Session() as session:
        session.trust_env = False
        try:
            response = session.post(
                base_url.rstrip("/") + "/api/voice",
                headers={TOKEN_HEADER: token},
                files={"audio": (Path(path).name, data, "audio/wav")},
                data=form,
                timeout=timeout,
            )
        except requests.RequestException as exc:
            raise AiosError(
                f"controller not reachable at {base_url}: {exc}", code="app_unreachable"
            ) from exc
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.ok and isinstance(body, dict):
        return body
    error = body.get("error", {}) if isinstance(body, dict) else {}
    failure = AiosError(
        str(error.get("message") or f"HTTP {response.status_code}"),
        code=str(error.get("code") or "http_error"),
    )
    failure.http_status = response.status_code
    raise failure
