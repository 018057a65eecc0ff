#!/usr/bin/env bash
# Session 29, device call 3, on the machine call 2 left warm (its binaries in /tmp and build-gpu,
# built from the tree with ab_lean.patch applied): a second sweep of the lean tree (#30 item 4)
# and runner_overhead_bench on it three times (#32 item 1: the median of three runs).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out=/tmp/call3
mkdir -p "$out"
keep() { tar czf "${OUT:-/tmp}/call3.tgz" -C "$out" .; }
[ -x /tmp/lean/thread_scaling_bench ] && [ -x build-gpu/bench/runner_overhead_bench ] ||
  { echo "call 2's binaries are gone (a fresh machine)"; exit 1; }
timeout 150 /tmp/lean/thread_scaling_bench --threads 1,2,4,8,16 --cycles 500 --rounds 10 \
  --seconds 2 --setup caller --engine-hold >"$out/sweep_lean_2.txt" 2>&1
cut -c1-120 "$out/sweep_lean_2.txt"
keep
for i in 1 2 3; do
  echo "== runner_overhead_bench lean, run $i (at ${SECONDS}s)"
  timeout 70 build-gpu/bench/runner_overhead_bench --backend cuda --cycles 1000 --rounds 96 \
    >"$out/overhead_lean_$i.txt" 2>&1
  grep -E "runner / driver|runner / engine|engine / driver" "$out/overhead_lean_$i.txt"
  keep
done
echo "done at ${SECONDS}s"
