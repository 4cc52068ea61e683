#!/usr/bin/env bash
# Makes sure Debian's Prometheus server and promtool are installed for the observability tests
# (test/prometheus.test.ts scrapes a test stack with a real Prometheus; promtool checks the alert
# rules in observability/prometheus/). CI starts from a clean clone, so this installs Debian's `prometheus`
# package with apt-get when it is missing. Idempotent: when both run it only prints their versions.
# `PROMETHEUS_PATH` / `PROMTOOL_PATH` point at other binaries.
set -euo pipefail

prometheus="${PROMETHEUS_PATH:-/usr/bin/prometheus}"
promtool="${PROMTOOL_PATH:-/usr/bin/promtool}"

runs() { "$prometheus" --version >/dev/null 2>&1 && "$promtool" --version >/dev/null 2>&1; }

if runs; then exit 0; fi

if [ -n "${PROMETHEUS_PATH:-}${PROMTOOL_PATH:-}" ]; then
  echo "ensure-prometheus: PROMETHEUS_PATH=${PROMETHEUS_PATH:-} / PROMTOOL_PATH=${PROMTOOL_PATH:-} do not run; point them at working binaries or unset them to use Debian's." >&2
  exit 1
fi

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "ensure-prometheus: Prometheus is missing; install Debian's package as root: apt-get install --no-install-recommends prometheus" >&2
  exit 1
fi

# apt's progress goes to a log shown only if the install fails (quiet on success). The package's
# service is not started: policy-rc.d refuses it (the tests run their own server on loopback, and
# a system Prometheus on :9090 would only be in the way).
log="$(mktemp)"
policy=/usr/sbin/policy-rc.d
placed_policy=false
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && placed_policy=true
fi
trap 'rm -f "$log"; if $placed_policy; then rm -f "$policy"; fi' EXIT
if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "ensure-prometheus: apt-get could not install prometheus (see above)." >&2
  exit 1
fi

if ! runs; then
  echo "ensure-prometheus: prometheus was installed but $prometheus --version or $promtool --version fails." >&2
  exit 1
fi
