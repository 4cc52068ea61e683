#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for the browser tests (test/browser/, driven by
# playwright-core): CI starts from a clean clone, and Playwright's own browser download does not
# work here. Idempotent: when Chromium already runs it only prints its version. Used by
# test/support/browser.ts before the first launch; `CHROMIUM_PATH` points at another binary.
set -euo pipefail

chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"

runs() { "$chromium" --version 2>/dev/null; }

if runs; then exit 0; fi

if [ -n "${CHROMIUM_PATH:-}" ]; then
  echo "ensure-chromium: CHROMIUM_PATH=$CHROMIUM_PATH does not run; point it at a working Chromium or unset it to use Debian's /usr/bin/chromium." >&2
  exit 1
fi

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "ensure-chromium: Chromium is missing; install Debian's package as root: apt-get install --no-install-recommends chromium fonts-dejavu-core" >&2
  exit 1
fi

# apt's progress goes to a log shown only if the install fails (quiet on success).
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# fonts-dejavu-core: without a font the screenshots render text as empty boxes.
if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "ensure-chromium: apt-get could not install chromium (see above)." >&2
  exit 1
fi

if ! runs; then
  echo "ensure-chromium: chromium was installed but $chromium --version fails." >&2
  exit 1
fi
