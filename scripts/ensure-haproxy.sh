#!/usr/bin/env bash
# Makes sure Debian's HAProxy is installed for the production topology (`npm run topology`, its test
# and `npm run bench -- --suite scale`) and the Temporal TLS test (HAProxy terminates TLS in front of
# the dev server). CI starts from a clean clone, so this installs Debian's `haproxy` package with
# apt-get when it is missing (its service is not started). Idempotent. `HAPROXY_PATH` points at
# another binary.
set -euo pipefail
source "$(dirname "$0")/lib/debian-package.sh"

haproxy="${HAPROXY_PATH:-/usr/sbin/haproxy}"
runs() { "$haproxy" -v >/dev/null 2>&1; }

ensure_debian_packages haproxy HAPROXY_PATH runs haproxy
