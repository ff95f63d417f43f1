#!/usr/bin/env bash
# The macOS compile check, run on Linux: loom and every target of it (tests, benches) compile
# and pass clippy for aarch64-apple-darwin and x86_64-apple-darwin. It proves that every
# Linux-only call has a macOS path behind `cfg` and that the macOS code type-checks against the
# real macOS bindings (the `libc` crate's); it does not link or run anything, so what only a Mac
# proves (the guard's process groups, the peer and memory bounds, the tests) is left to the
# release workflow's macOS runners.
#
# How, without a Mac: the Rust standard library for each target comes from rustup; the bundled
# DuckDB's C++ cannot be compiled for macOS here, so the check builds the `duckdb` crate without
# `bundled` (loom's default feature) against an empty library folder (a check does not link);
# `ring`'s few C files compile with clang as freestanding code, with three stand-in headers
# (scripts/macos-include: TargetConditionals.h, string.h, assert.h).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(aarch64-apple-darwin x86_64-apple-darwin)
clang="$(command -v clang-19 || command -v clang || true)"
if [ -z "$clang" ]; then
    echo "check-macos: installing clang (apt)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q clang-19 >/dev/null
    clang="$(command -v clang-19)"
fi
empty="$(mktemp -d)"
trap 'rm -rf "$empty"' EXIT
export DUCKDB_LIB_DIR="$empty"
# A target folder of its own: the Linux build's cache stays as it is.
export CARGO_TARGET_DIR="${LOOM_MACOS_TARGET_DIR:-$HOME/.cache/loom-target-macos}"
for target in "${targets[@]}"; do
    rustup target add "$target" >/dev/null
    var="${target//-/_}"
    export "CC_${var}=$clang"
    export "CFLAGS_${var}=-ffreestanding -nostdlibinc -I$root/scripts/macos-include"
    echo "check-macos: clippy --all-targets for $target" >&2
    cargo clippy --target "$target" --no-default-features --all-targets -- -D warnings
done
