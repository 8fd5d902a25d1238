#!/usr/bin/env bash
# Installs Debian's Chromium for the robots and the browser tests, when no Chromium is there.
# Courtier never downloads a browser of its own; on Windows and macOS it uses Chrome or Edge.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || [ -n "${COURTIER_BROWSER_PATH:-}" ]; then
  exit 0
fi
echo "Installing Debian's chromium (needed by the robots and the browser tests)…"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
