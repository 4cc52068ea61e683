#!/usr/bin/env bash
# Installs the official MCP Python SDK, pinned, into .tools/mcp-python (a virtualenv) for the opt-in
# check that connects its Client to the MCP endpoint (test/external/mcp-python-sdk.test.ts). 2.3.0
# negotiates 2025-11-25 by the handshake and 2026-07-28 through server/discover. Idempotent: an
# existing install of the pinned version is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
version="2.3.0"
venv=".tools/mcp-python"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$version')" 2>/dev/null; then
  exit 0
fi
echo "install-mcp-python: installing mcp==$version into $venv …" >&2
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$version"
"$venv/bin/python" -c "import mcp" || { echo "install-mcp-python: installed, but mcp does not import" >&2; exit 1; }
