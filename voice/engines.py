"""Speech-to-text engines behind one small interface.

Each engine says whether it can run here (`unavailable_reason`), which languages it
serves (`serves`) and turns 16 kHz mono PCM into text (`transcribe`). Failures are
the two voice errors: `VoiceUnavailable` (the engine cannot serve the request: not
installed, no key, network down) and `VoiceNotUnderstood` (it listened and heard no
command). Lower libraries' errors are translated here. Their messages are English,
for developers; each names the situation (`variant`) whose sentence the user reads
(`aios_protocol.strings`), the lower library's text going to `detail`.

- `PocketsphinxEngine`: offline, English only, constrained by the command grammar
  (`grammar`): it hears only the phrases the installed apps declare.
- `OpenAITranscriptionEngine`: any OpenAI-compatible `/audio/transcriptions` endpoint
  (Whisper); all languages; needs `voice_api_key`.
- `GoogleEngine`: Google's free web speech endpoint through SpeechRecognition; in
  "auto" for the languages pocketsphinx does not hear (Chinese), with "google" for
  all; it sends audio to Google only after the user's yes (`voice_google_consent`).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from aios_protocol.errors import AiosError
from controller.routing.router import AppProfile
from voice.audio import TARGET_RATE, PcmAudio, wav_from_pcm
from voice.grammar import CommandGrammar, build_command_grammar

__all__ = [
    "NO_CONSENT",
    "GoogleEngine",
    "OpenAITranscriptionEngine",
    "PocketsphinxEngine",
    "SpeechEngine",
    "VoiceNotUnderstood",
    "VoiceUnavailable",
    "normalize_language",
]

log = logging.getLogger("aios.voice.engines")

NO_CONSENT = "the user has not agreed to send audio to Google's speech service"


class VoiceUnavailable(AiosError):
    """No engine can serve this request (language, missing package or key, network)."""

    code = "voice_unavailable"
    http_status = 503


class VoiceNotUnderstood(AiosError):
    """The engine listened but recognised nothing it could use."""

    code = "voice_not_understood"
    http_status = 422


def normalize_language(lang: str | None, default: str = "zh-CN") -> str:
    """ "zh", "zh_cn", "cmn" → "zh-CN"; "en", "en_us" → "en-US"; others kept as given."""
    value = (lang or default or "zh-CN").strip().replace("_", "-")
    lowered = value.lower()
    if lowered in ("zh", "cmn", "zh-cn", "zh-hans", "zh-hans-cn", "cmn-hans-cn"):
        return "zh-CN"
    if lowered in ("en", "en-us"):
        return "en-US"
    parts = value.split("-")
    return "-".join(
        [parts[0].lower()] + [p.upper() if len(p) == 2 else p for p in parts[1:]]
    )


class SpeechEngine(Protocol):
    name: str
    offline: bool

    def unavailable_reason(self) -> str | None:
        """None when the engine can run here; else why not (English, technical)."""
        ...

    def serves(self, lang: str) -> bool: ...

    def transcribe(self, audio: PcmAudio, lang: str) -> str: ...


class PocketsphinxEngine:
    """Offline English recognition over the apps' command grammar."""

    name = "pocketsphinx"
    offline = True

    def __init__(self, grammar_source: Callable[[], Sequence[AppProfile]]):
        self._grammar_source = grammar_source
        self._lock = threading.Lock()
        self._decoder: Any = None
        self._initial_cmn = ""
        self._active_jsgf = ""
        self._searches = 0

    def serves(self, lang: str) -> bool:
        return lang.lower().startswith("en")

    def _ensure_decoder(self) -> Any:
        if self._decoder is None:
            from pocketsphinx import Decoder

            self._decoder = Decoder(samprate=TARGET_RATE, lm=None, logfn=os.devnull)
            self._initial_cmn = self._decoder.get_cmn()
        return self._decoder

    def grammar(self) -> CommandGrammar:
        """The grammar for the apps installed now (rebuilt on every call: it is cheap)."""
        with self._lock:
            decoder = self._ensure_decoder()
            return build_command_grammar(
                list(self._grammar_source()), lambda w: decoder.lookup_word(w) is not None
            )

    def unavailable_reason(self) -> str | None:
        try:
            import pocketsphinx  # noqa: F401
        except ImportError:
            return "pocketsphinx is not installed (pip install pocketsphinx)"
        try:
            if self.grammar().empty:
                return (
                    "the installed apps have no English keywords or examples to listen for"
                )
        except Exception as exc:  # a broken model install
            return f"pocketsphinx cannot start: {exc}"
        return None

    def transcribe(self, audio: PcmAudio, lang: str) -> str:
        grammar = self.grammar()
        if grammar.empty:
            raise VoiceUnavailable(
                "pocketsphinx has nothing to listen for: the installed apps have no"
                " English keywords or examples",
                variant="no_english_commands",
            )
        with self._lock:
            decoder = self._ensure_decoder()
            if grammar.jsgf != self._active_jsgf:
                self._searches += 1
                name = f"commands{self._searches}"
                decoder.add_jsgf_string(name, grammar.jsgf)
                decoder.activate_search(name)
                self._active_jsgf = grammar.jsgf
            # Same starting point for every utterance: the answer must not depend on
            # what was said before (live normalisation would otherwise carry over).
            decoder.set_cmn(self._initial_cmn)
            decoder.start_utt()
            decoder.process_raw(audio.samples, full_utt=True)
            decoder.end_utt()
            hypothesis = decoder.hyp()
        text = (hypothesis.hypstr if hypothesis is not None else "").strip()
        if not text:
            raise VoiceNotUnderstood(
                "pocketsphinx heard none of the apps' commands", variant="commands"
            )
        return text


class OpenAITranscriptionEngine:
    """An OpenAI-compatible `/audio/transcriptions` endpoint (Whisper and friends)."""

    name = "openai"
    offline = False

    def __init__(self, api_key: str, base_url: str, model: str, timeout: float = 30.0):
        self._api_key = api_key
        self._base_url = base_url
        self._model = model
        self._timeout = timeout

    def serves(self, lang: str) -> bool:
        return True

    def unavailable_reason(self) -> str | None:
        if not self._api_key:
            return "no voice_api_key configured for the online transcription endpoint"
        try:
            import openai  # noqa: F401
        except ImportError:
            return "the openai package is not installed"
        return None

    def transcribe(self, audio: PcmAudio, lang: str) -> str:
        import openai

        client = openai.OpenAI(
            api_key=self._api_key,
            base_url=self._base_url,
            timeout=self._timeout,
            max_retries=0,
        )
        try:
            result = client.audio.transcriptions.create(
                model=self._model,
                file=("speech.wav", wav_from_pcm(audio), "audio/wav"),
                language=lang.split("-")[0].lower(),
            )
        except openai.APIStatusError as exc:
            failed = f"the transcription endpoint answered HTTP {exc.status_code}"
            raise VoiceUnavailable(failed, detail=failed, variant="online_failed") from exc
        except openai.OpenAIError as exc:
            raise VoiceUnavailable(
                f"the transcription endpoint cannot be reached: {exc}",
                detail=str(exc),
                variant="online_unreachable",
            ) from exc
        text = str(getattr(result, "text", result) or "").strip()
        if not text:
            raise VoiceNotUnderstood("the transcription endpoint heard no text")
        return text


class GoogleEngine:
    """Google's free web speech service via SpeechRecognition's `recognize_google`
    (online). It sends nothing until the user has said yes (`consented`); `endpoint`
    is the service's URL (a local fake in tests); `serves_lang` narrows the languages
    it is used for (in "auto": those no offline engine hears)."""

    name = "google"
    offline = False

    def __init__(
        self,
        endpoint: str,
        consented: bool,
        *,
        serves_lang: Callable[[str], bool] = lambda lang: True,
        timeout: float = 15.0,
    ):
        self.endpoint = endpoint
        self.consented = consented
        self._serves = serves_lang
        self._timeout = timeout

    def serves(self, lang: str) -> bool:
        return self._serves(lang)

    def unavailable_reason(self) -> str | None:
        try:
            import speech_recognition  # noqa: F401
        except ImportError:
            return "SpeechRecognition is not installed (pip install SpeechRecognition)"
        if not self.consented:
            return NO_CONSENT
        return None

    def transcribe(self, audio: PcmAudio, lang: str) -> str:
        if not self.consented:  # never reached through the Recognizer; a guard
            raise VoiceUnavailable(NO_CONSENT, variant="needs_consent")
        import speech_recognition as sr

        recognizer = sr.Recognizer()
        recognizer.operation_timeout = self._timeout
        data = sr.AudioData(audio.samples, audio.rate, 2)
        try:
            text = recognizer.recognize_google(data, language=lang, endpoint=self.endpoint)
        except sr.UnknownValueError as exc:
            raise VoiceNotUnderstood("Google's speech endpoint heard no words") from exc
        except sr.RequestError as exc:
            raise VoiceUnavailable(
                f"Google's speech endpoint cannot be reached: {exc}",
                detail=str(exc),
                variant="online_unreachable",
            ) from exc
        text = str(text or "").strip()
        if not text:
            raise VoiceNotUnderstood("Google's speech endpoint heard no text")
        return text
