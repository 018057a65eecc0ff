#!/usr/bin/env bash
# The first lines of a device call (reports/h200/sessionNN/callN.sh): configures build-gpu/ afresh
# for the H200 (Release, sm_90, warnings as errors, the vendored valijson where .deps has it) and
# builds the targets named, or everything when none is. On failure prints the logs' tails and
# exits 1; the logs stay in /tmp (configure.log, build.log).
#   tools/h200_build.sh [target...]
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
rm -rf build-gpu
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DVMMRUN_WERROR=ON "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu "${targets[@]}" >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
