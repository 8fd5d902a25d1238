#!/usr/bin/env bash
# Installs Debian's PostgreSQL server for the hub's tests, when no /usr/lib/postgresql/*/bin/pg_ctl
# is there. The tests never use a running system cluster: test/helpers/postgres.ts starts a
# throwaway one in a temp dir with these binaries (as the postgres user when run as root).
set -euo pipefail
for bin in /usr/lib/postgresql/*/bin/pg_ctl; do
  [ -x "$bin" ] && exit 0
done
. "$(dirname "$0")/lib/apt-install.sh"
apt_install "needed by the hub's tests" postgresql
