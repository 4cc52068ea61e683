#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for the browser tests (test/browser/, driven by
# playwright-core): CI starts from a clean clone, and Playwright's own browser download does not
# work here. Idempotent: when Chromium already runs it does nothing. Used by
# test/support/browser.ts before the first launch; `CHROMIUM_PATH` points at another binary.
set -euo pipefail
source "$(dirname "$0")/lib/debian-package.sh"

chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
runs() { "$chromium" --version >/dev/null 2>&1; }

# fonts-dejavu-core: without a font the screenshots render text as empty boxes.
ensure_debian_packages chromium CHROMIUM_PATH runs chromium fonts-dejavu-core
