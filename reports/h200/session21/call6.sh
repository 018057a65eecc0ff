#!/usr/bin/env bash
# Session 21, device call 6: generated scenarios on the H200 and the twin after the generator
# learnt threads groups (2 or 3 threads, each on a reservation and an allocation of its own),
# besides add, scale and axpy: tools/h200_crosscheck.sh, 8 jobs x 55 s, seed 2123.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DVMMRUN_WERROR=ON "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu --target vmm-run >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
PROBE=0 JOBS=8 COUNT=200 SEED=2123 TIME_LIMIT=55 OUT="${OUT:-/tmp}" tools/h200_crosscheck.sh \
  --isolate-percent 40 2>&1 | tail -12
