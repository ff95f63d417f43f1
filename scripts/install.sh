#!/bin/sh
# Installs the prebuilt loom for this machine from a GitHub release into ~/.local/bin (or
# $LOOM_INSTALL_DIR), checking the archive's SHA-256 first.
#   curl -fsSL https://github.com/loom-mcp/loom/releases/latest/download/install.sh | sh
set -eu
repo="${LOOM_REPO:-loom-mcp/loom}"
dir="${LOOM_INSTALL_DIR:-$HOME/.local/bin}"
case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
    Linux-aarch64 | Linux-arm64) target=aarch64-unknown-linux-gnu ;;
    Darwin-x86_64) target=x86_64-apple-darwin ;;
    Darwin-arm64) target=aarch64-apple-darwin ;;
    *) echo "loom: no prebuilt loom for $(uname -s) $(uname -m); build it from source" >&2; exit 1 ;;
esac
version="${LOOM_VERSION:-$(curl -fsSL "https://api.github.com/repos/$repo/releases/latest" | sed -n 's/.*"tag_name": *"v\([^"]*\)".*/\1/p')}"
name="loom-$version-$target"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
url="https://github.com/$repo/releases/download/v$version/$name.tar.gz"
curl -fsSL "$url" -o "$tmp/$name.tar.gz"
curl -fsSL "$url.sha256" -o "$tmp/$name.tar.gz.sha256"
if command -v sha256sum >/dev/null; then
    (cd "$tmp" && sha256sum -c "$name.tar.gz.sha256" >/dev/null)
else
    (cd "$tmp" && shasum -a 256 -c "$name.tar.gz.sha256" >/dev/null)
fi
tar -C "$tmp" -xzf "$tmp/$name.tar.gz"
mkdir -p "$dir"
install -m 0755 "$tmp/$name/loom" "$dir/loom"
echo "loom $version installed at $dir/loom"
