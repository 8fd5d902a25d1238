#!/usr/bin/env bash
# Installs Debian's PostgreSQL server for the hub's tests, when no /usr/lib/postgresql/*/bin/pg_ctl
# is there. The tests never use a running system cluster: test/helpers/postgres.ts starts a
# throwaway one in a temp dir with these binaries (as the postgres user when run as root).
set -euo pipefail
for bin in /usr/lib/postgresql/*/bin/pg_ctl; do
  [ -x "$bin" ] && exit 0
done
echo "Installing Debian's postgresql (needed by the hub's tests)…"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
