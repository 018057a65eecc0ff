#!/usr/bin/env bash
# Session 22, device call 2 (the graph-kernel table, Engine::LaunchKernel and kernel_copy): the
# evidence script (CTest with the GPU tests, among them LaunchKernel's and the registry's check of
# every row's declared layout against cuFuncGetParamInfo; every scenario against the host and H200
# baselines, kernel_copy's first H200 report among them; compute-sanitizer memcheck on
# kernel_copy; no benchmarks), then generated scenarios on the H200 and the twin
# (tools/h200_crosscheck.sh, 8 jobs x 55 s, seed 2202) now that the generator writes kernel_copy
# on the stream and as kernel nodes.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
mkdir -p /tmp/e
RUN_BENCH=0 SANITIZE=kernel_copy SANITIZE_SWEEPS=0 CTEST_SECONDS=230 OUT=/tmp/e \
  tools/h200_evidence.sh -DVMMRUN_WERROR=ON >/tmp/e/evidence.log 2>&1
echo "evidence exit $?"
cp /tmp/e/reports.tar.gz /tmp/e/*.log "${OUT:-/tmp}/" 2>/dev/null
cp /tmp/e/reports/kernel_copy.json "${OUT:-/tmp}/kernel_copy.h200.json" 2>/dev/null
grep -E "tests passed|Failed|FAIL|regression|scenarios,|sanitizer kernel_copy" /tmp/e/evidence.log | head -30
grep -E "kernel_copy" /tmp/e/run.log | head -5
PROBE=0 JOBS=8 COUNT=200 SEED=2202 TIME_LIMIT=55 OUT="${OUT:-/tmp}" tools/h200_crosscheck.sh \
  --isolate-percent 40 2>&1 | tail -6
