#!/usr/bin/env bash
# Session 24, device call 2 (a long burst's records built on the background thread, times shared
# out per chunk of 32 steps, the plan's has_threads flag, CUDA Create memoizing its handle and
# Release locking once): the evidence script (CTest with the GPU tests; every scenario against the
# host and H200 baselines; no sanitizer, no benchmarks), then generated scenarios on the H200 and
# the twin (tools/h200_crosscheck.sh, 8 jobs x 40 s, seed 2401).
set -uo pipefail
cd "$(dirname "$0")/../../.."
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
mkdir -p /tmp/e
RUN_BENCH=0 SANITIZE=none SANITIZE_SWEEPS=0 CTEST_SECONDS=230 OUT=/tmp/e \
  tools/h200_evidence.sh -DVMMRUN_WERROR=ON >/tmp/e/evidence.log 2>&1
echo "evidence exit $?"
cp /tmp/e/*.log "${OUT:-/tmp}/" 2>/dev/null
grep -E "tests passed|Failed|FAIL|regression|scenarios,|added" /tmp/e/evidence.log | head -30
PROBE=0 JOBS=8 COUNT=200 SEED=2401 TIME_LIMIT=40 OUT="${OUT:-/tmp}" tools/h200_crosscheck.sh \
  --isolate-percent 40 2>&1 | tail -6
