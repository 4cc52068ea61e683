#!/usr/bin/env bash
# Makes sure Debian's PgBouncer is installed for the pooler test (test/pgbouncer.test.ts runs the app
# through it in transaction mode). CI starts from a clean clone, so this installs Debian's `pgbouncer`
# package with apt-get when it is missing (its service is not started). Idempotent. `PGBOUNCER_PATH`
# points at another binary.
set -euo pipefail
source "$(dirname "$0")/lib/debian-package.sh"

pgbouncer="${PGBOUNCER_PATH:-/usr/sbin/pgbouncer}"
runs() { "$pgbouncer" --version >/dev/null 2>&1; }

ensure_debian_packages pgbouncer PGBOUNCER_PATH runs pgbouncer
