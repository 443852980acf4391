"""Fixtures for the voice tests: speech made by espeak-ng, the real apps' profiles, and
a fake of Google's speech service (`google`, one per module, its requests cleared
before each test) that hears `GOOGLE_HEARD`.

Test speech uses espeak-ng's American English voice with the `f2` variant at 150
words per minute: pocketsphinx's acoustic model is American English, and this
synthetic voice is the one it hears most reliably (docs/PERFORMANCE.md, "Voice").
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.routing.router import AppProfile
from tests.fakes.google_speech import FakeGoogleSpeech
from voice.grammar import profiles_from_manifests

ROOT = Path(__file__).resolve().parents[2]
ESPEAK = shutil.which("espeak-ng")
needs_espeak = pytest.mark.skipif(ESPEAK is None, reason="espeak-ng is not installed")

TEST_VOICE = "en-us+f2"
TEST_SPEED = 150


def speak_to_wav(text: str, path: Path, voice: str = TEST_VOICE) -> Path:
    assert ESPEAK is not None
    subprocess.run(
        [ESPEAK, "-v", voice, "-s", str(TEST_SPEED), "-w", str(path), text],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return path


@pytest.fixture(scope="session")
def profiles() -> list[AppProfile]:
    found = profiles_from_manifests(ROOT / "apps")
    assert {p.app_id for p in found} >= {"hello_app", "music_app", "code_app"}
    return found


@pytest.fixture(scope="session")
def spoken(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], bytes]:
    """`spoken("say hello")` → WAV bytes of espeak-ng saying it (cached per phrase)."""
    if ESPEAK is None:
        pytest.skip("espeak-ng is not installed")
    folder = tmp_path_factory.mktemp("speech")
    cache: dict[str, bytes] = {}

    def make(text: str) -> bytes:
        if text not in cache:
            path = folder / (text.replace(" ", "_") + ".wav")
            cache[text] = speak_to_wav(text, path).read_bytes()
        return cache[text]

    return make


GOOGLE_HEARD = "你好"


@pytest.fixture(scope="module")
def google_service() -> Iterator[FakeGoogleSpeech]:
    fake = FakeGoogleSpeech(GOOGLE_HEARD)
    try:
        yield fake
    finally:
        fake.close()


@pytest.fixture
def google(google_service: FakeGoogleSpeech) -> FakeGoogleSpeech:
    google_service.requests.clear()
    return google_service
