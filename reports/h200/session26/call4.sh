#!/usr/bin/env bash
# Session 26, device call 4, on the tree of call 3 (ab_prefetch.patch in): the evidence script
# (CTest with the GPU tests; every scenario against the host and H200 baselines; no sanitizer, no
# benchmarks), then generated scenarios on the H200 and the twin (tools/h200_crosscheck.sh, 8 jobs
# x 30 s, seed 2602).
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
PROBE=0 JOBS=8 COUNT=200 SEED=2602 TIME_LIMIT=30 OUT="$out" tools/h200_crosscheck.sh \
  --isolate-percent 40 2>&1 | tail -6
echo "all done at ${SECONDS}s"
