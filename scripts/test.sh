#!/usr/bin/env bash
# The project's test command: installs the pinned test peers, then runs every test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/loom-target}"
"$root/scripts/install-test-peers.sh"
cd "$root"
cargo test --all-targets "$@"
