#!/usr/bin/env bash
# Installs the Debian packages vmm-run builds with, when any is missing (Debian 12 / Ubuntu 24.04).
# The CUDA toolkit is optional: without nvcc the CUDA backend is simply not built.
set -euo pipefail

packages=(cmake ninja-build g++ git libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libvalijson-dev
          libgtest-dev clang-format)
# The timeline's browser test (tests/timeline_browser_test.sh) loads pages in headless Chromium;
# where the package does not exist (Ubuntu ships a snap) that test is skipped, not failed.
if apt-cache show chromium >/dev/null 2>&1; then packages+=(chromium); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "tools/deps.sh: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "tools/deps.sh: need root or sudo to install ${missing[*]}" >&2; exit 2; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
