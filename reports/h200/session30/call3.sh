#!/usr/bin/env bash
# Session 30, device call 3, on the machine call 2 left warm when it still is (else built here):
#  - #30 item 4: two whole sweeps of this tree with every round printed (thread_scaling_bench
#    --threads 1,2,4,8,16 --setup caller --engine-hold --print-rounds, 500 cycles, at least 10
#    rounds and 2 s a point), pooled per point by tools/pool_rounds.py with call 1's base runs of
#    the page cycle at 8 and 16 threads (same binary's source, a fresh build);
#  - #32 item 1: runner_overhead_bench --backend cuda --cycles 1000 --rounds 96, three runs,
#    between and after the sweeps.
# Outputs tarred into $OUT/call3.tgz after every run.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
out=/tmp/s30call3
rm -rf "$out"
mkdir -p "$out"
keep() { tar czf "${OUT:-/tmp}/call3.tgz" -C "$out" .; }
if [ -d build-gpu ]; then
  cmake --build build-gpu --target thread_scaling_bench runner_overhead_bench >/tmp/build3.log 2>&1 ||
    { tail -20 /tmp/build3.log; exit 1; }
else
  tools/h200_build.sh thread_scaling_bench runner_overhead_bench || exit 1
fi
echo "built at ${SECONDS}s"
overhead() {
  echo "== runner_overhead_bench, run $1 (at ${SECONDS}s)"
  timeout 70 build-gpu/bench/runner_overhead_bench --backend cuda --cycles 1000 --rounds 96 \
    >"$out/overhead_$1.txt" 2>&1
  grep -E "runner / driver|runner / engine|engine / driver" "$out/overhead_$1.txt"
  keep
}
sweep() {
  echo "== sweep $1 (at ${SECONDS}s)"
  timeout 200 build-gpu/bench/thread_scaling_bench --threads 1,2,4,8,16 --cycles 500 --rounds 10 \
    --seconds 2 --setup caller --engine-hold --print-rounds >"$out/sweep_$1.txt" 2>&1
  grep -v '^round' "$out/sweep_$1.txt" | cut -c1-120
  keep
}
overhead 1
sweep 1
overhead 2
sweep 2
overhead 3
echo "done at ${SECONDS}s"
