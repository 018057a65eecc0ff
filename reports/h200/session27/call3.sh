#!/usr/bin/env bash
# Session 27, device call 3, on the final tree (Engine::HoldContext in): the evidence script
# (CTest with the GPU tests; every scenario against the host and H200 baselines; no sanitizer,
# no benchmarks), then runner_overhead_bench --backend cuda --cycles 1000 --rounds 96 three times
# (#32 item 1: the median of three runs), then generated scenarios on the H200 and the twin
# (tools/h200_crosscheck.sh, 8 jobs x 30 s, seed 2701).
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
  echo "== runner_overhead_bench --backend cuda, run $i (at ${SECONDS}s)"
  timeout 60 build-gpu/bench/runner_overhead_bench --backend cuda --cycles 1000 --rounds 96 \
    >/tmp/e/overhead_$i.txt 2>&1
  cat /tmp/e/overhead_$i.txt
done
tar czf "$out/overhead.tgz" -C /tmp/e overhead_1.txt overhead_2.txt overhead_3.txt
PROBE=0 JOBS=8 COUNT=200 SEED=2701 TIME_LIMIT=30 OUT="$out" tools/h200_crosscheck.sh \
  --isolate-percent 40 2>&1 | tail -6
echo "all done at ${SECONDS}s"
