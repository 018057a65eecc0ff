#!/usr/bin/env bash
# Installs what is missing, then configures and builds vmm-run into ./build (Release).
# Extra arguments go to the CMake configure step, e.g. -DVMMRUN_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
# The CUDA toolkit's usual home, when nvcc is not on PATH yet.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j"$(nproc)"
