#!/usr/bin/env bash
# Installs Debian's Chromium for the robots and the browser tests, when it is missing: the full
# browser (the console's browser tests, robots shown on screen) and its headless shell (the
# robots' browser when they run unseen: less CPU per job).
# Courtier never downloads a browser of its own; on Windows and macOS it uses Chrome or Edge.
set -euo pipefail
missing=()
if ! { command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || [ -n "${COURTIER_BROWSER_PATH:-}" ]; }; then
  missing+=(chromium)
fi
if [ ! -x /usr/lib/chromium/chromium-headless-shell ] && [ -z "${COURTIER_BROWSER_PATH:-}" ]; then
  missing+=(chromium-headless-shell)
fi
[ ${#missing[@]} -eq 0 ] && exit 0
. "$(dirname "$0")/lib/apt-install.sh"
# The headless shell needs the same version of chromium-common as chromium: apt upgrades an
# installed chromium along with it when the two would differ.
apt_install "needed by the robots and the browser tests" "${missing[@]}"
