#!/usr/bin/env bash
# Session 19, device call 2 (tree: compact step records, DetailKey + SmallVector): the runner
# overhead benchmark three times (issue 32 item 1), bench/replay_bench (issue 32 item 5) on
# reuse.yaml and graph_update.yaml (9 rounds each, twice) and on a few other scenarios (5 rounds),
# and the 100,000-step run's peak RSS on CUDA (issue 28 item 2).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu --target replay_bench vmm-run runner_overhead_bench >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
for i in 1 2 3; do
  build-gpu/bench/runner_overhead_bench --backend cuda --cycles 1000 --rounds 48 | tail -4
done
build-gpu/bench/runner_overhead_bench --backend null --cycles 1000 --rounds 200 | tail -1
for s in reuse graph_update reuse graph_update; do
  build-gpu/bench/replay_bench scenarios/$s.yaml --rounds 9
done
for s in vector_add stitching graph_dag many_pages; do
  build-gpu/bench/replay_bench scenarios/$s.yaml --rounds 5
done
sed -n '/^version/,/^  - {op: free/p' reports/h200/session19/call1.sh >/tmp/l100k.yaml
for b in cuda host; do
  echo "== 100,000 steps, $b"
  build-gpu/vmm-run run -q --backend $b /tmp/l100k.yaml --report /tmp/l100k.$b.json | tail -2
done
