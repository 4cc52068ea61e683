#!/usr/bin/env bash
# Installs LiteLLM's proxy, pinned, into .tools/litellm (a virtualenv) for the opt-in check that
# runs the metered intelligence through it (`npm run test:litellm`, test/external/). Pinned: 1.80.5
# is the release the Product Runtime was tried against; 1.107.0 was a compromised release and must
# never be installed. Idempotent: an existing install of the pinned version is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
version="1.80.5"
venv=".tools/litellm"
if [ -x "$venv/bin/litellm" ] && "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('litellm') != '$version')" 2>/dev/null; then
  exit 0
fi
echo "install-litellm: installing litellm[proxy]==$version into $venv (a few minutes) …" >&2
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "litellm[proxy]==$version"
"$venv/bin/litellm" --version >/dev/null 2>&1 || { echo "install-litellm: installed, but litellm does not run" >&2; exit 1; }
