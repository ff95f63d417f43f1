#!/usr/bin/env bash
# Installs the real MCP peers the integration tests use into .peers/ (ignored by git):
# the npm servers (server-everything, server-filesystem, server-memory; pinned in
# tests/peers/package.json) and the Python `mcp` SDK in a venv.
# Idempotent: a peer that is already installed at the pinned version is left alone.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
peers="$root/.peers"
mkdir -p "$peers/node"

if ! cmp -s "$root/tests/peers/package.json" "$peers/node/package.json" || [ ! -d "$peers/node/node_modules/@modelcontextprotocol/server-everything" ]; then
  echo "installing npm test peers into $peers/node" >&2
  cp "$root/tests/peers/package.json" "$peers/node/package.json"
  (cd "$peers/node" && npm install --no-audit --no-fund --loglevel=error)
fi

if [ ! -x "$peers/venv/bin/python" ]; then
  echo "creating Python venv in $peers/venv" >&2
  python3 -m venv "$peers/venv"
fi
if ! cmp -s "$root/tests/peers/requirements.txt" "$peers/venv/requirements.txt"; then
  echo "installing Python test peers" >&2
  "$peers/venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/tests/peers/requirements.txt"
  cp "$root/tests/peers/requirements.txt" "$peers/venv/requirements.txt"
fi

# The end-to-end workbench test drives `loom tui` inside tmux; the peer check's tests hold
# the lsof placement (macOS's) to the /proc one, with lsof at its system path.
need=""
command -v tmux >/dev/null 2>&1 || need="$need tmux"
[ -x /usr/bin/lsof ] || [ -x /usr/sbin/lsof ] || need="$need lsof"
if [ -n "$need" ]; then
  echo "installing$need" >&2
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq $need
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq $need
  fi
fi
