#!/usr/bin/env bash
# Prints the Homebrew formula for a release: the four archives scripts/package.sh made in
# DIST, with their SHA-256 sums. Usage: scripts/homebrew-formula.sh DIST VERSION
# The repository is $GITHUB_REPOSITORY (set in the release workflow), else the one Cargo.toml
# names.
set -euo pipefail
dist="$1" version="$2"
root="$(cd "$(dirname "$0")/.." && pwd)"
repo="${GITHUB_REPOSITORY:-$(sed -n 's|^repository = "https://github.com/\(.*\)"|\1|p' "$root/Cargo.toml")}"
base="https://github.com/$repo/releases/download/v$version"
sum() { cut -d' ' -f1 "$dist/loom-$version-$1.tar.gz.sha256"; }
cat <<RUBY
class Loom < Formula
  desc "MCP proxy that turns large tool results into queryable datasets"
  homepage "https://github.com/$repo"
  version "$version"
  license "MIT"

  on_macos do
    on_arm do
      url "$base/loom-$version-aarch64-apple-darwin.tar.gz"
      sha256 "$(sum aarch64-apple-darwin)"
    end
    on_intel do
      url "$base/loom-$version-x86_64-apple-darwin.tar.gz"
      sha256 "$(sum x86_64-apple-darwin)"
    end
  end

  on_linux do
    on_arm do
      url "$base/loom-$version-aarch64-unknown-linux-gnu.tar.gz"
      sha256 "$(sum aarch64-unknown-linux-gnu)"
    end
    on_intel do
      url "$base/loom-$version-x86_64-unknown-linux-gnu.tar.gz"
      sha256 "$(sum x86_64-unknown-linux-gnu)"
    end
  end

  def install
    bin.install "loom"
    pkgshare.install "loom.toml"
  end

  test do
    assert_match "loom", shell_output("#{bin}/loom --version")
  end
end
RUBY
