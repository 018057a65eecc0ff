#!/usr/bin/env bash
# Session 23, device call 2 (records built with their identity in place, a thread's calls compiled
# before its barrier, the overhead bench's A/A line): the evidence script (CTest with the GPU
# tests; every scenario against the host and H200 baselines; no sanitizer, no benchmarks), then
# generated scenarios on the H200 and the twin (tools/h200_crosscheck.sh, 8 jobs x 55 s,
# seed 2301).
set -uo pipefail
cd "$(dirname "$0")/../../.."
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
mkdir -p /tmp/e
RUN_BENCH=0 SANITIZE=none SANITIZE_SWEEPS=0 CTEST_SECONDS=230 OUT=/tmp/e \
  tools/h200_evidence.sh -DVMMRUN_WERROR=ON >/tmp/e/evidence.log 2>&1
echo "evidence exit $?"
cp /tmp/e/reports.tar.gz /tmp/e/*.log "${OUT:-/tmp}/" 2>/dev/null
grep -E "tests passed|Failed|FAIL|regression|scenarios,|added" /tmp/e/evidence.log | head -30
PROBE=0 JOBS=8 COUNT=200 SEED=2301 TIME_LIMIT=55 OUT="${OUT:-/tmp}" tools/h200_crosscheck.sh \
  --isolate-percent 40 2>&1 | tail -6
