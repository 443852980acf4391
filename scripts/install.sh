#!/usr/bin/env bash
# Installs everything Triton AIOS needs on a fresh Debian machine (run as root).
#   scripts/install.sh          the system: Python packages, sandbox, desktop window, voice, fonts
#   scripts/install.sh --test   the same plus the test tools (Chromium for Playwright, Xvfb)
# Safe to run again: apt and pip skip what is already there. Once an install has
# finished, a stamp in .cache/install/ holds a hash of what it read (this script,
# pyproject.toml, the Python it installed into); while that hash is unchanged, the
# next run does nothing. Delete .cache/install/ to install again anyway.
set -euo pipefail
cd "$(dirname "$0")/.."

want_test=0
[ "${1:-}" = "--test" ] && want_test=1
mode=$([ "$want_test" = 1 ] && echo test || echo system)

stamps=.cache/install
inputs_hash() {
  {
    cat scripts/install.sh pyproject.toml
    python3 -c 'import sys; print(sys.executable, sys.version)'
    echo "$1"
  } | sha256sum | cut -d' ' -f1
}
installed() {  # the stamp of mode $1 matches, and the package is still installed
  [ -f "$stamps/$1" ] && [ "$(cat "$stamps/$1")" = "$(inputs_hash "$1")" ] &&
    python3 -c 'import importlib.metadata as m; m.distribution("triton-aios")' 2>/dev/null
}
# the test install is the system install and more
if installed "$mode" || { [ "$mode" = system ] && installed test; }; then
  exit 0
fi

apt_packages=(
  bubblewrap            # sandbox around shell_exec / process_start
  espeak-ng sox         # speech output (pyttsx3 drives espeak-ng), audio conversion
  fonts-wqy-microhei    # CJK font so Chinese renders
  fonts-noto-color-emoji  # colour emoji: app icons, tray and taskbar glyphs
  xvfb xauth            # a virtual display where no real one exists
  gir1.2-webkit2-4.1 libgirepository1.0-dev libcairo2-dev pkg-config  # pywebview GTK backend
)
if [ "$want_test" = 1 ]; then
  # chromium for the bench, its headless build for the tests (tests/procs.py says why)
  apt_packages+=(chromium chromium-headless-shell imagemagick xdotool)
fi

missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
    missing=()
  else
    echo "install.sh: not root; please install: ${missing[*]}" >&2
  fi
fi

python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
  -e ".[desktop$([ "$want_test" = 1 ] && echo ',test')]" 'PyGObject<3.51' pycairo

# no stamp while apt packages are missing: the next run tries again
if [ "${#missing[@]}" = 0 ]; then
  mkdir -p "$stamps"
  inputs_hash "$mode" > "$stamps/$mode"
fi
