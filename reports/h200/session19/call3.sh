#!/usr/bin/env bash
# Session 19, device call 3 (tree: compact records + the check scratch made with the lane): the
# runner overhead benchmark three times (issue 32 item 1) and replay_bench (issue 32 item 5) on
# reuse, graph_update (9 rounds, twice each), stitching, many_pages, graph_dag (5 rounds).
# Everything goes to $OUT/call3.txt; the tail is printed.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
log=${OUT:-/tmp}/call3.txt
{
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    "${prefix[@]}" >/tmp/configure.log 2>&1 &&
    cmake --build build-gpu --target replay_bench vmm-run runner_overhead_bench >/tmp/build.log 2>&1 ||
    { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
  git log --oneline -1
  for i in 1 2 3; do
    build-gpu/bench/runner_overhead_bench --backend cuda --cycles 1000 --rounds 48
  done
  for s in reuse graph_update reuse graph_update; do
    build-gpu/bench/replay_bench scenarios/$s.yaml --rounds 9
  done
  for s in stitching many_pages graph_dag; do
    build-gpu/bench/replay_bench scenarios/$s.yaml --rounds 5
  done
} >"$log" 2>&1
grep -E "runner / driver|engine / driver|executor alone|whole run|outside|graph read-back|not replayed|check_matmul|check_equal|replay_bench" "$log"
