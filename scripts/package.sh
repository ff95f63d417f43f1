#!/usr/bin/env bash
# Packs a built loom binary the ways users install things: a release archive with its SHA-256,
# the npm packages (`loom-mcp`, a launcher, and `loom-mcp-<os>-<cpu>`, which holds the binary:
# npm installs only the one for the machine, and nothing is downloaded at install time), and a
# Python wheel (`loom-mcp`, the binary inside, run by `loom` or `uvx loom-mcp`).
#
# Usage: scripts/package.sh BINARY TARGET OUT_DIR
#   TARGET: x86_64-unknown-linux-gnu, aarch64-unknown-linux-gnu, x86_64-apple-darwin or
#   aarch64-apple-darwin. The release workflow runs it on each target's own build.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$1" target="$2" out="$3"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)"
case "$target" in
    x86_64-unknown-linux-gnu) os=linux cpu=x64 wheel_tag=manylinux_2_17_x86_64 ;;
    aarch64-unknown-linux-gnu) os=linux cpu=arm64 wheel_tag=manylinux_2_17_aarch64 ;;
    x86_64-apple-darwin) os=darwin cpu=x64 wheel_tag=macosx_11_0_x86_64 ;;
    aarch64-apple-darwin) os=darwin cpu=arm64 wheel_tag=macosx_11_0_arm64 ;;
    *) echo "package: unknown target $target" >&2; exit 2 ;;
esac
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The archive: loom, the README, the license, and the demo config.
name="loom-$version-$target"
mkdir -p "$work/$name"
install -m 0755 "$bin" "$work/$name/loom"
cp "$root/README.md" "$root/loom.toml" "$work/$name/"
[ -f "$root/LICENSE" ] && cp "$root/LICENSE" "$work/$name/"
tar -C "$work" -czf "$out/$name.tar.gz" "$name"
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")

# npm: the platform package with the binary, and the launcher that depends on every platform's.
plat="$work/npm/loom-mcp-$os-$cpu"
mkdir -p "$plat/bin"
install -m 0755 "$bin" "$plat/bin/loom"
cat > "$plat/package.json" <<JSON
{
  "name": "loom-mcp-$os-$cpu",
  "version": "$version",
  "description": "The loom binary for $os $cpu (installed by loom-mcp)",
  "license": "MIT",
  "os": ["$os"],
  "cpu": ["$cpu"],
  "files": ["bin/loom"]
}
JSON
main="$work/npm/loom-mcp"
mkdir -p "$main/bin"
cp "$root/packaging/npm/loom-mcp/bin/loom.js" "$main/bin/loom.js"
chmod 0755 "$main/bin/loom.js"
cp "$root/README.md" "$main/"
optional=""
for p in linux-x64 linux-arm64 darwin-x64 darwin-arm64; do
    optional="$optional${optional:+,}\"loom-mcp-$p\": \"$version\""
done
cat > "$main/package.json" <<JSON
{
  "name": "loom-mcp",
  "version": "$version",
  "description": "An MCP proxy that turns large tool results into queryable datasets",
  "license": "MIT",
  "bin": { "loom": "bin/loom.js" },
  "files": ["bin/loom.js", "README.md"],
  "engines": { "node": ">=18" },
  "optionalDependencies": { $optional }
}
JSON
(cd "$plat" && npm pack --silent --pack-destination "$out" >/dev/null)
(cd "$main" && npm pack --silent --pack-destination "$out" >/dev/null)

# The wheel: a platform wheel whose package holds the binary and whose `loom` script runs it.
whl="$work/wheel"
pkgdir="$whl/loom_mcp"
mkdir -p "$pkgdir/bin" "$whl/loom_mcp-$version.dist-info"
install -m 0755 "$bin" "$pkgdir/bin/loom"
cat > "$pkgdir/__init__.py" <<'PY'
"""loom, the MCP proxy: the binary of this wheel's platform, run as `loom`."""
PY
cat > "$pkgdir/__main__.py" <<'PY'
"""Runs the loom binary inside this package with this process's arguments (exec: the same
process, stdio and exit status)."""
import os
import sys


def main():
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "loom")
    os.execv(binary, [binary] + sys.argv[1:])


if __name__ == "__main__":
    main()
PY
info="$whl/loom_mcp-$version.dist-info"
cat > "$info/METADATA" <<META
Metadata-Version: 2.1
Name: loom-mcp
Version: $version
Summary: An MCP proxy that turns large tool results into queryable datasets
License: MIT
Requires-Python: >=3.8
META
cat > "$info/WHEEL" <<META
Wheel-Version: 1.0
Generator: loom scripts/package.sh
Root-Is-Purelib: false
Tag: py3-none-$wheel_tag
META
cat > "$info/entry_points.txt" <<META
[console_scripts]
loom = loom_mcp.__main__:main
loom-mcp = loom_mcp.__main__:main
META
python3 - "$whl" "$info/RECORD" <<'PY'
import base64, hashlib, os, sys
root, record = sys.argv[1], sys.argv[2]
lines = []
for d, _, files in os.walk(root):
    for f in sorted(files):
        p = os.path.join(d, f)
        rel = os.path.relpath(p, root)
        data = open(p, "rb").read()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{rel},sha256={digest},{len(data)}")
lines.append(os.path.relpath(record, root) + ",,")
open(record, "w").write("\n".join(lines) + "\n")
PY
wheel_name="loom_mcp-$version-py3-none-$wheel_tag.whl"
(cd "$whl" && python3 - "$out/$wheel_name" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for d, _, files in os.walk("."):
        for f in sorted(files):
            p = os.path.join(d, f)
            info = zipfile.ZipInfo.from_file(p, os.path.normpath(p))
            with open(p, "rb") as fh:
                z.writestr(info, fh.read(), zipfile.ZIP_DEFLATED)
PY
)
ls "$out"
