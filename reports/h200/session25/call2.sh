#!/usr/bin/env bash
# Session 25, device call 2, on the final code (a long burst's later steps compiled on the
# background thread ahead of the calls; the recorder polling every 200 µs): the evidence script
# (CTest with the GPU tests; every scenario against the host and H200 baselines; no sanitizer, no
# benchmarks), runner_overhead_bench --backend cuda --cycles 1000 --rounds 48 three times (#32
# item 1, on another machine than call 1's, maybe), then generated scenarios on the H200 and the
# twin (tools/h200_crosscheck.sh, 8 jobs x 30 s, seed 2501).
set -uo pipefail
cd "$(dirname "$0")/../../.."
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
out="${OUT:-/tmp}"
mkdir -p /tmp/e
RUN_BENCH=0 SANITIZE=none SANITIZE_SWEEPS=0 CTEST_SECONDS=230 OUT=/tmp/e \
  tools/h200_evidence.sh -DVMMRUN_WERROR=ON >/tmp/e/evidence.log 2>&1
echo "evidence exit $? at ${SECONDS}s"
cp /tmp/e/*.log "$out/" 2>/dev/null
grep -E "tests passed|Failed|FAIL|regression|scenarios,|added" /tmp/e/evidence.log | head -30
for i in 1 2 3; do
  echo "== runner_overhead_bench --backend cuda, run $i"
  timeout 60 build-gpu/bench/runner_overhead_bench --backend cuda --cycles 1000 --rounds 48
done >"$out/overhead.txt" 2>&1
grep -E "^==|per step|runner / driver|engine / driver|driver / driver|runner / engine|CPU time|inside engine|outside|compiled" \
  "$out/overhead.txt"
echo "benches done at ${SECONDS}s"
PROBE=0 JOBS=8 COUNT=200 SEED=2501 TIME_LIMIT=30 OUT="$out" tools/h200_crosscheck.sh \
  --isolate-percent 40 2>&1 | tail -6
echo "all done at ${SECONDS}s"
