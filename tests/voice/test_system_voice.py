"""Voice wired into the running system (S-90..S-92): a spoken WAV through
`/api/voice` and `aios say --audio` reaches the right app; mute and status answer."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.controller.system import RunningSystem, build_apps_dir, launch
from tests.procs import PYTHON, ROOT
from tests.voice.conftest import needs_espeak, speak_to_wav

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("voice_system")
    running = launch(root, build_apps_dir(root / "apps", test_apps=()))
    try:
        yield running
    finally:
        running.stop()


@needs_espeak
def test_spoken_command_is_routed_through_api_voice(
    system: RunningSystem, tmp_path: Path
) -> None:
    wav = speak_to_wav("say hello", tmp_path / "hello.wav")
    with open(wav, "rb") as handle:
        response = requests.post(
            f"{system.url}/api/voice",
            files={"audio": ("hello.wav", handle, "audio/wav")},
            data={"lang": "en-US"},
            headers={"X-AIOS-Token": system.token},
            timeout=60,
        )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["transcript"] == "say hello"
    assert [t["app_id"] for t in body["tasks"]] == ["hello_app"]
    assert body["tasks"][0]["result"]["data"]["content"].startswith("你好")


@needs_espeak
def test_aios_say_audio_from_the_terminal(system: RunningSystem, tmp_path: Path) -> None:
    wav = speak_to_wav("say hello", tmp_path / "hello.wav")
    done = subprocess.run(
        [
            PYTHON,
            "-m",
            "aios",
            "say",
            "--audio",
            str(wav),
            "--lang",
            "en-US",
            "--json",
            "--state-dir",
            str(system.state_dir),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "🎤 say hello" in done.stderr
    assert '"hello_app"' in done.stdout


def test_chinese_without_the_yes_is_said_plainly(system: RunningSystem) -> None:
    status = system.get("/api/voice/status").json()
    zh = next(row for row in status["languages"] if row["lang"].lower().startswith("zh"))
    assert zh["available"] is False and zh["needs_consent"] is True
    assert zh["message"].startswith("没有发送任何声音")


def test_mute_toggle_through_the_api(system: RunningSystem) -> None:
    assert system.post("/api/speech/mute", {"muted": True}).json()["muted"] is True
    assert system.get("/api/speech/mute").json()["muted"] is True
    assert system.post("/api/speech/mute", {"muted": False}).json()["muted"] is False
