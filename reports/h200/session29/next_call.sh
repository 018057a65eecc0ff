#!/usr/bin/env bash
# Prepared in session 29 for the next session's first device call (it has NOT run yet): whether
# every point of the threads sweep is under 1.05 at its pooled median on the lean tree (#30 item
# 4: session 29's two sweeps read 19 of 20 points under it, the page cycle at 16 threads 0.987
# and 1.063), and the median of three runner_overhead_bench runs (#32 item 1).
#  - thread_scaling_bench --threads 1,2,4,8,16 --setup caller --engine-hold --print-rounds, three
#    sweeps (500 cycles, at least 10 rounds and 2 s a point), rounds pooled per point by
#    tools/pool_rounds.py (median with its 95 % bootstrap interval);
#  - runner_overhead_bench --backend cuda --cycles 1000 --rounds 96, three runs, between the
#    sweeps.
# Outputs tarred into $OUT/next.tgz after every run (a call brings back 8 files at most).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out=/tmp/next
mkdir -p "$out"
keep() { tar czf "${OUT:-/tmp}/next.tgz" -C "$out" .; }
tools/h200_build.sh thread_scaling_bench runner_overhead_bench || exit 1
echo "built at ${SECONDS}s"
for i in 1 2 3; do
  echo "== sweep $i (at ${SECONDS}s)"
  timeout 120 build-gpu/bench/thread_scaling_bench --threads 1,2,4,8,16 --cycles 500 --rounds 10 \
    --seconds 2 --setup caller --engine-hold --print-rounds >"$out/sweep_$i.txt" 2>&1
  grep -v '^round' "$out/sweep_$i.txt" | cut -c1-120
  echo "== runner_overhead_bench, run $i (at ${SECONDS}s)"
  timeout 70 build-gpu/bench/runner_overhead_bench --backend cuda --cycles 1000 --rounds 96 \
    >"$out/overhead_$i.txt" 2>&1
  grep -E "runner / driver|runner / engine|engine / driver" "$out/overhead_$i.txt"
  keep
done
python3 tools/pool_rounds.py lean="$out/sweep_*.txt" | tee "$out/pooled.txt"
keep
echo "done at ${SECONDS}s"
