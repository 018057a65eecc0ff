#!/usr/bin/env bash
# Session 23, device call 5, with the budget's last minutes: generated scenarios on the H200 and
# the twin now that the generator hands pages over between threads through sync points
# (tools/h200_crosscheck.sh: vmm-run alone built, 8 jobs x 40 s, seed 2303, no probe).
set -uo pipefail
cd "$(dirname "$0")/../../.."
rm -rf build-gpu
export NCCL_NVLS_ENABLE=0
PROBE=0 JOBS=8 COUNT=200 SEED=2303 TIME_LIMIT=40 OUT="${OUT:-/tmp}" tools/h200_crosscheck.sh \
  --isolate-percent 40 2>&1 | grep -E "^build|summary|disagree|killed" | head -20
