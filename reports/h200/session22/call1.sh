#!/usr/bin/env bash
# Session 22, device call 1 (79f412a: the host twin's kernel nodes from packed arguments, context: none threads and the elementwise chain rule in the generator, first on the H200): the evidence script
# (CTest with the GPU tests, the two new thread tests among them; every scenario against the host
# and H200 baselines; no benchmarks, no sanitizer), then generated scenarios on the H200 and the
# twin (tools/h200_crosscheck.sh, 8 jobs x 55 s, a new seed).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
mkdir -p /tmp/e
RUN_BENCH=0 SANITIZE=none SANITIZE_SWEEPS=0 CTEST_SECONDS=230 OUT=/tmp/e \
  tools/h200_evidence.sh -DVMMRUN_WERROR=ON >/tmp/e/evidence.log 2>&1
echo "evidence exit $?"
cp /tmp/e/reports.tar.gz /tmp/e/*.log "${OUT:-/tmp}/" 2>/dev/null
grep -E "tests passed|Failed|FAIL|regression|scenarios," /tmp/e/evidence.log | head -30
PROBE=0 JOBS=8 COUNT=200 SEED=2201 TIME_LIMIT=55 OUT="${OUT:-/tmp}" tools/h200_crosscheck.sh \
  --isolate-percent 40 2>&1 | tail -15
