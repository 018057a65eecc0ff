#!/usr/bin/env bash
# Session 19, device call 2: bench/replay_bench (issue 32 item 5), a whole run against the raw
# replay of its plan's calls, on reuse.yaml and graph_update.yaml (9 rounds each, twice) and on
# a few other scenarios (5 rounds) to show what it replays.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu --target replay_bench vmm-run >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
for s in reuse graph_update reuse graph_update; do
  build-gpu/bench/replay_bench scenarios/$s.yaml --rounds 9
done
for s in vector_add stitching graph_dag many_pages remap_replay_stress; do
  build-gpu/bench/replay_bench scenarios/$s.yaml --rounds 5
done
