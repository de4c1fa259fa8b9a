#!/usr/bin/env bash
# Installs what perfflow needs on Debian 12 (as root, or with sudo): clang 19,
# LLVM 19 headers and tools (opt, FileCheck), CMake, jq and pkg-config.
# A Rust toolchain (1.86 or newer, e.g. from rustup) must already be there.
set -euo pipefail
packages=(clang-19 llvm-19-dev llvm-19-tools cmake make jq pkg-config)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "perfflow: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null; then
  echo "perfflow: cargo not found. Install a Rust toolchain (1.86 or newer), e.g. with rustup, and run again." >&2
  exit 1
fi
