#!/usr/bin/env bash
# Session 30, device call 4, on the machine call 3 left warm (its build-gpu kept): a third whole
# sweep of this tree with every round printed, to pool with call 3's two (#30 item 4).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out=/tmp/s30call4
rm -rf "$out"
mkdir -p "$out"
[ -x build-gpu/bench/thread_scaling_bench ] || { echo "call 3's build is gone (a fresh machine)"; exit 1; }
timeout 200 build-gpu/bench/thread_scaling_bench --threads 1,2,4,8,16 --cycles 500 --rounds 10 \
  --seconds 2 --setup caller --engine-hold --print-rounds >"$out/sweep_3.txt" 2>&1
grep -v '^round' "$out/sweep_3.txt" | cut -c1-120
tar czf "${OUT:-/tmp}/call4.tgz" -C "$out" .
echo "done at ${SECONDS}s"
