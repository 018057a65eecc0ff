#!/usr/bin/env bash
# Session 30, device call 2, on this tree (the code of session 29's end; nothing of call 1's
# patches landed): the evidence script (CTest with the GPU tests; every scenario against the host
# and H200 baselines; no sanitizer, no benchmarks), built fresh; then generated scenarios on the
# H200 and the twin (tools/h200_crosscheck.sh, 8 jobs x 55 s, seed 3001).
# Outputs tarred into $OUT/call2.tgz after each stage (a call brings back 8 files at most).
set -uo pipefail
cd "$(dirname "$0")/../../.."
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
out=/tmp/s30call2
rm -rf "$out" /tmp/e /tmp/crosscheck
mkdir -p "$out" /tmp/e
keep() { tar czf "${OUT:-/tmp}/call2.tgz" -C "$out" .; }
RUN_BENCH=0 SANITIZE=none SANITIZE_SWEEPS=0 CTEST_SECONDS=200 OUT=/tmp/e \
  tools/h200_evidence.sh -DVMMRUN_WERROR=ON >"$out/evidence.log" 2>&1
echo "evidence exit $? at ${SECONDS}s"
cp /tmp/e/*.log "$out/" 2>/dev/null
rm -f "$out/run.log"  # the scenarios' step log (7.8 MB): evidence.log holds every verdict
grep -E "tests passed|Failed|FAIL|regression|scenarios,|added" "$out/evidence.log" | head -30
keep
mkdir -p "$out/crosscheck"
PROBE=0 JOBS=8 COUNT=200 SEED=3001 TIME_LIMIT=55 OUT="$out/crosscheck" tools/h200_crosscheck.sh \
  --isolate-percent 40 2>&1 | tail -30
keep
echo "done at ${SECONDS}s"
