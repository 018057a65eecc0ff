#!/usr/bin/env bash
# Session 20, device call 1 (tree cad8986): session 19's call 6, unsafe_calls_in_blocks.yaml with
# its "map past the end" block reserving at the start of a freed 8 MiB span, three runs, the first
# kept as the H200 baseline; then replay_bench on reuse and graph_update (5 rounds each), the
# first GPU run of the bench's review mends and of the engine's shared CheckState/DriverDotText.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
log=${OUT:-/tmp}/call1.txt
{
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    "${prefix[@]}" >/tmp/configure.log 2>&1 &&
    cmake --build build-gpu --target vmm-run replay_bench >/tmp/build.log 2>&1 ||
    { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
  for i in 1 2 3; do
    build-gpu/vmm-run run --backend cuda scenarios/unsafe_calls_in_blocks.yaml \
      --report "${OUT:-/tmp}/unsafe_calls_in_blocks.$i.json" | tail -3
    echo "exit ${PIPESTATUS[0]}"
  done
  for s in reuse graph_update; do
    build-gpu/bench/replay_bench scenarios/$s.yaml --rounds 5
  done
} >"$log" 2>&1
grep -E "exit|whole run|outside|not replayed|error" "$log"
