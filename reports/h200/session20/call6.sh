#!/usr/bin/env bash
# Session 20, device call 6 (the final tree: the elementwise tests rewritten, the captured elementwise
# planner fix): the evidence script (CTest with the GPU tests, every scenario against the host and
# H200 baselines; no benchmarks, no sanitizer), then graph_elementwise.yaml twice more on its own.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
mkdir -p /tmp/e
RUN_BENCH=0 SANITIZE=none SANITIZE_SWEEPS=0 CTEST_SECONDS=230 OUT=/tmp/e \
  tools/h200_evidence.sh -DVMMRUN_WERROR=ON >/tmp/e/evidence.log 2>&1
echo "evidence exit $?"
cp /tmp/e/reports.tar.gz /tmp/e/*.log "${OUT:-/tmp}/" 2>/dev/null
for i in 1 2; do
  build-gpu/vmm-run run --backend cuda scenarios/graph_elementwise.yaml \
    --report "${OUT:-/tmp}/graph_elementwise.$i.json" | tail -2
done
grep -E "tests passed|Failed|FAIL|regression|scenarios," /tmp/e/evidence.log | head -30
