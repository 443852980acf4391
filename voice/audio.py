"""Recorded audio for speech recognition: any WAV in, 16 kHz mono 16-bit PCM out.

Recognisers want one format (pocketsphinx's acoustic model is 16 kHz mono); users and
browsers send whatever they recorded (44.1/48 kHz, stereo, 8/24/32-bit, float). This
module owns that conversion: `sox` when it is installed (scripts/install.sh installs
it; it also reads float and WAVE_FORMAT_EXTENSIBLE files), else a pure-Python path
over the standard `wave` module (integer PCM only; `audioop` is deprecated, so it is
not used). Silence is padded at both ends: the recogniser needs a little of it to
settle before the first word and after the last, and a faint deterministic noise
(about 24 dB below the speech) replaces digital silence, which the acoustic model
handles badly (synthetic test speech has exact zeros between words; a microphone
never does).
"""

from __future__ import annotations

import io
import math
import random
import shutil
import subprocess
import wave
from array import array
from dataclasses import dataclass

from aios_protocol.errors import InvalidRequest

__all__ = [
    "MAX_SECONDS",
    "TARGET_RATE",
    "PcmAudio",
    "pcm_from_wav",
    "wav_from_pcm",
]

TARGET_RATE = 16000
MAX_SECONDS = 30.0  # one spoken command; longer recordings are refused
PAD_SECONDS = 0.3
NOISE_BELOW_SPEECH = 16  # noise amplitude = speech RMS / 16 (about -24 dB)
NOISE_MAX = 200  # …but never louder than about -44 dBFS
_NOISE_PERIOD = 4093


@dataclass(frozen=True)
class PcmAudio:
    """Signed 16-bit little-endian mono samples at `rate` Hz."""

    samples: bytes
    rate: int = TARGET_RATE

    @property
    def seconds(self) -> float:
        return len(self.samples) / 2 / self.rate


def _invalid(message: str) -> InvalidRequest:
    return InvalidRequest(message, code="invalid_audio")


def _check_riff(data: bytes) -> None:
    if len(data) < 44 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise _invalid("audio must be a WAV file (RIFF/WAVE)")


def pcm_from_wav(
    data: bytes, *, pad_seconds: float = PAD_SECONDS, use_sox: bool | None = None
) -> PcmAudio:
    """Convert a WAV of any rate/channels/sample width to 16 kHz mono 16-bit PCM.

    Raises `InvalidRequest` (code `invalid_audio`) for data that is not a readable WAV
    or is longer than `MAX_SECONDS`.
    """
    _check_riff(data)
    sox = shutil.which("sox") if use_sox in (None, True) else None
    if use_sox and sox is None:
        raise _invalid("sox is not installed")
    samples = _convert_with_sox(sox, data) if sox else _convert_in_python(data)
    audio = PcmAudio(samples)
    if audio.seconds > MAX_SECONDS:
        raise _invalid(f"recording longer than {MAX_SECONDS:g} s")
    if not samples:
        raise _invalid("the recording holds no audio")
    pad = b"\x00\x00" * int(TARGET_RATE * pad_seconds)
    return PcmAudio(_with_comfort_noise(pad + samples + pad))


def _with_comfort_noise(samples: bytes) -> bytes:
    values = array("h")
    values.frombytes(samples)
    if not values:
        return samples
    rms = math.sqrt(sum(v * v for v in values) / len(values))
    amplitude = min(NOISE_MAX, int(rms / NOISE_BELOW_SPEECH))
    if amplitude < 1:
        return samples
    rng = random.Random(0)  # the same input always gives the same output
    noise = [rng.randint(-amplitude, amplitude) for _ in range(_NOISE_PERIOD)]
    for i, value in enumerate(values):
        values[i] = max(-32768, min(32767, value + noise[i % _NOISE_PERIOD]))
    return values.tobytes()


def _convert_with_sox(sox: str, data: bytes) -> bytes:
    command = [sox, "-q", "-t", "wav", "-", "-t", "raw", "-r", str(TARGET_RATE)]
    command += ["-c", "1", "-b", "16", "-e", "signed-integer", "-L", "-"]
    try:
        done = subprocess.run(command, input=data, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _invalid(f"could not convert the recording: {exc}") from exc
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise _invalid(
            "could not read the WAV: " + (reason[-1] if reason else "sox failed")
        )
    return done.stdout


def _convert_in_python(data: bytes) -> bytes:
    try:
        with wave.open(io.BytesIO(data), "rb") as reader:
            channels = reader.getnchannels()
            width = reader.getsampwidth()
            rate = reader.getframerate()
            if reader.getnframes() > MAX_SECONDS * rate * 2:
                raise _invalid(f"recording longer than {MAX_SECONDS:g} s")
            frames = reader.readframes(reader.getnframes())
    except (wave.Error, EOFError) as exc:
        raise _invalid(f"could not read the WAV: {exc}") from exc
    if rate <= 0 or channels <= 0:
        raise _invalid("the WAV header has no sample rate or channels")
    mono = _mix_to_mono(_to_int16(frames, width), channels)
    return _resample(mono, rate, TARGET_RATE).tobytes()


def _to_int16(frames: bytes, width: int) -> array:
    """Samples as 16-bit integers, whatever the source width (1–4 bytes)."""
    if width == 2:
        out = array("h")
        out.frombytes(frames[: len(frames) - len(frames) % 2])
        return out
    if width == 1:  # unsigned 8-bit
        return array("h", ((b - 128) << 8 for b in frames))
    if width in (3, 4):
        shift = 8 * (width - 2)
        count = len(frames) // width
        return array(
            "h",
            (
                int.from_bytes(frames[i * width : (i + 1) * width], "little", signed=True)
                >> shift
                for i in range(count)
            ),
        )
    raise _invalid(f"unsupported sample width: {width} bytes")


def _mix_to_mono(samples: array, channels: int) -> array:
    if channels == 1:
        return samples
    frames = len(samples) // channels
    return array(
        "h",
        (
            sum(samples[i * channels : (i + 1) * channels]) // channels
            for i in range(frames)
        ),
    )


def _resample(samples: array, source_rate: int, target_rate: int) -> array:
    """Linear interpolation; enough for speech recognition of short commands."""
    if source_rate == target_rate or not samples:
        return samples
    count = int(len(samples) * target_rate / source_rate)
    step = source_rate / target_rate
    last = len(samples) - 1
    out = array("h", bytes(2 * count))
    for i in range(count):
        position = i * step
        left = int(position)
        right = left + 1 if left < last else last
        fraction = position - left
        out[i] = int(samples[left] + (samples[right] - samples[left]) * fraction)
    return out


def wav_from_pcm(audio: PcmAudio) -> bytes:
    """Wrap PCM samples in a WAV container (for engines that take files)."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(audio.rate)
        writer.writeframes(audio.samples)
    return buffer.getvalue()
