#!/usr/bin/env bash
# Makes sure Debian's Prometheus server and promtool are installed for the observability tests
# (test/prometheus.test.ts scrapes a test stack with a real Prometheus; promtool checks the alert
# rules in observability/prometheus/). CI starts from a clean clone, so this installs Debian's
# `prometheus` package with apt-get when it is missing (its service is not started). Idempotent.
# `PROMETHEUS_PATH` / `PROMTOOL_PATH` point at other binaries.
set -euo pipefail
source "$(dirname "$0")/lib/debian-package.sh"

prometheus="${PROMETHEUS_PATH:-/usr/bin/prometheus}"
promtool="${PROMTOOL_PATH:-/usr/bin/promtool}"
runs() { "$prometheus" --version >/dev/null 2>&1 && "$promtool" --version >/dev/null 2>&1; }

ensure_debian_packages prometheus PROMETHEUS_PATH runs prometheus
