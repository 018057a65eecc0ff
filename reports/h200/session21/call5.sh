#!/usr/bin/env bash
# Session 21, device call 5: issue 30 item 4 on the final engine (378e532: mappings per thread, the
# last mapped allocation memoized per thread), with more rounds than calls 1 and 2 (15 per point,
# 1000 cycles per thread, session 17's cycle count), two runs: thread_scaling_bench, runner and
# raw loop alternated round by round, the median of the per-round ratios per point.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
log=${OUT:-/tmp}/call5.txt
{
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    "${prefix[@]}" >/tmp/configure.log 2>&1 &&
    cmake --build build-gpu --target thread_scaling_bench >/tmp/build.log 2>&1 ||
    { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
  for i in 1 2; do
    echo "== thread_scaling_bench, run $i, $(date +%T)"
    timeout 250 build-gpu/bench/thread_scaling_bench --cycles 1000 --rounds 15
  done
} >"$log" 2>&1
grep -E "^==|^map-only|^cycle|H200" "$log" | cut -c1-64
