#!/usr/bin/env bash
# Session 23, device call 4, on the session's final code: the evidence script (CTest with the GPU
# tests, among them the data tests of fill and matmul now launched through LaunchKernel and the
# graph tests of set_node on fill and matmul nodes; every scenario against the host and H200
# baselines; no sanitizer), generated scenarios on the H200 and the twin (tools/h200_crosscheck.sh,
# 8 jobs x 45 s, seed 2302), then the thread bench with its A/A column (1000 cycles, at least 7
# rounds) and runner_overhead_bench three times (1000 cycles, 48 rounds).
set -uo pipefail
cd "$(dirname "$0")/../../.."
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
out="${OUT:-/tmp}"
mkdir -p /tmp/e
RUN_BENCH=0 SANITIZE=none SANITIZE_SWEEPS=0 CTEST_SECONDS=230 OUT=/tmp/e \
  tools/h200_evidence.sh -DVMMRUN_WERROR=ON >/tmp/e/evidence.log 2>&1
echo "evidence exit $?"
cp /tmp/e/*.log "$out/" 2>/dev/null
grep -E "tests passed|Failed|FAIL|regression|scenarios,|added" /tmp/e/evidence.log | head -30
PROBE=0 JOBS=8 COUNT=200 SEED=2302 TIME_LIMIT=45 OUT="$out" tools/h200_crosscheck.sh \
  --isolate-percent 40 2>&1 | tail -3
cmake --build build-gpu --target thread_scaling_bench runner_overhead_bench >/tmp/bench_build.log \
  2>&1 || { tail -20 /tmp/bench_build.log; exit 1; }
timeout 150 build-gpu/bench/thread_scaling_bench --cycles 1000 --rounds 7 >"$out/threads.txt" 2>&1
cat "$out/threads.txt"
for i in 1 2 3; do
  echo "== runner_overhead_bench, run $i"
  timeout 60 build-gpu/bench/runner_overhead_bench --backend cuda --cycles 1000 --rounds 48
done >"$out/overhead.txt" 2>&1
grep -E "^==|runner / driver|engine / driver|driver / driver|runner / engine|executor alone" \
  "$out/overhead.txt"
