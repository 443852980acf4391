#!/usr/bin/env bash
# Installs everything Triton AIOS needs on a fresh Debian machine (run as root).
#   scripts/install.sh          the system: Python packages, sandbox, desktop window, voice, fonts
#   scripts/install.sh --test   the same plus the test tools (Chromium for Playwright, Xvfb)
# Safe to run again: apt and pip skip what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

want_test=0
[ "${1:-}" = "--test" ] && want_test=1

apt_packages=(
  bubblewrap            # sandbox around shell_exec / process_start
  espeak-ng sox         # speech output (pyttsx3 drives espeak-ng), audio conversion
  fonts-wqy-microhei    # CJK font so Chinese renders
  fonts-noto-color-emoji  # colour emoji: app icons, tray and taskbar glyphs
  xvfb xauth            # a virtual display where no real one exists
  gir1.2-webkit2-4.1 libgirepository1.0-dev libcairo2-dev pkg-config  # pywebview GTK backend
)
if [ "$want_test" = 1 ]; then
  apt_packages+=(chromium imagemagick xdotool)
fi

missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "install.sh: not root; please install: ${missing[*]}" >&2
  fi
fi

python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
  -e ".[desktop$([ "$want_test" = 1 ] && echo ',test')]" 'PyGObject<3.51' pycairo
