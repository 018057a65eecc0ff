#!/usr/bin/env bash
# Session 19, device call 4 (tree: + DOT text from the recorded structure, replay_bench's gap
# list): replay_bench (issue 32 item 5) on reuse, graph_update (9 rounds, twice each),
# stitching, many_pages, graph_dag (5 rounds); the 100,000-step run's peak RSS on CUDA and on the
# twin (issue 28 item 2), after the compact records and the heap given back before the run.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
log=${OUT:-/tmp}/call4.txt
{
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    "${prefix[@]}" >/tmp/configure.log 2>&1 &&
    cmake --build build-gpu --target replay_bench vmm-run >/tmp/build.log 2>&1 ||
    { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
  for s in reuse graph_update reuse graph_update; do
    build-gpu/bench/replay_bench scenarios/$s.yaml --rounds 9
  done
  for s in stitching many_pages graph_dag; do
    build-gpu/bench/replay_bench scenarios/$s.yaml --rounds 5
  done
  sed -n '/^version/,/^  - {op: free/p' reports/h200/session19/call1.sh >/tmp/l100k.yaml
  for b in cuda host; do
    echo "== 100,000 steps, $b"
    build-gpu/vmm-run run -q --backend $b /tmp/l100k.yaml --report /tmp/l100k.$b.json | tail -2
  done
} >"$log" 2>&1
grep -E "whole run|outside|graph read-back|largest gaps|not replayed|replay_bench|peak RSS|error" "$log"
