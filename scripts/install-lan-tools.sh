#!/usr/bin/env bash
# Installs what the office LAN tests need from Debian, when missing: iproute2 (`ip netns`, veth and a
# bridge give the office and brokers' machines their own addresses) and libnss3-tools (`certutil`,
# to make Chromium trust the office CA). Without root the LAN tests skip and say so.
set -euo pipefail
missing=()
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
command -v certutil >/dev/null 2>&1 || missing+=(libnss3-tools)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null 2>&1; then
  echo "Cannot install ${missing[*]} (not root, no sudo): the office LAN tests will skip." >&2
  exit 0
fi
. "$(dirname "$0")/lib/apt-install.sh"
apt_install "needed by the office LAN tests" "${missing[@]}"
