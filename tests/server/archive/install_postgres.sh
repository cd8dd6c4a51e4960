#!/usr/bin/env bash
# The archive's tests (tests/server/archive) run a real PostgreSQL server of their own,
# started by the tests on a unix socket in a temporary folder (as an unprivileged user
# when run as root). This installs Debian's `postgresql` package when its server is
# missing, with apt-get (through sudo when not root), and says so.
# PAIGOW_PG_BIN names another folder holding initdb, pg_ctl and postgres, and skips it.
set -euo pipefail

if [ -n "${PAIGOW_PG_BIN:-}" ]; then
    exit 0
fi
if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    exit 0
fi
for bin in /usr/lib/postgresql/*/bin; do
    if [ -x "$bin/initdb" ] && [ -x "$bin/pg_ctl" ]; then
        exit 0
    fi
done
if ! command -v apt-get >/dev/null; then
    echo "tests/server/archive: needs PostgreSQL's server (Debian: postgresql); install it or set PAIGOW_PG_BIN" >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
echo "make test: installing the Debian package for the archive's tests: postgresql"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends postgresql >/dev/null
echo "make test: installed postgresql"
