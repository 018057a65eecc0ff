#!/usr/bin/env bash
# Session 29, device call 2, on this tree with ab_lean.patch applied (the candidate: pack + hot +
# direct, Bind's and the idle wait's common cases inline; call 1 read engine / raw 1.083 base,
# 1.062 with pack + hot, resolved; runner / raw not):
#  - the evidence script (CTest with the GPU tests; every scenario against the host and H200
#    baselines; no sanitizer, no benchmarks), the lean tree built fresh: what lands if it lands;
#  - the A/B: thread_scaling_bench --threads 16 --mix map-only --setup caller --engine-hold
#    --print-rounds, 25 rounds a run, lean against this tree, alternated, four runs each, pooled
#    (tools/pool_rounds.py) with call 1's base rounds beside;
#  - then the lean tree's whole sweep (1 to 16 threads, both mixes), as far as the time allows.
# Outputs tarred into $OUT/call2.tgz after each stage (a call brings back 8 files at most).
set -uo pipefail
cd "$(dirname "$0")/../../.."
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
out=/tmp/call2
mkdir -p "$out" /tmp/e /tmp/lean /tmp/base
keep() { tar czf "${OUT:-/tmp}/call2.tgz" -C "$out" .; }
lean=reports/h200/session29/ab_lean.patch
git apply "$lean" || { echo "the patch does not apply"; exit 1; }
RUN_BENCH=0 SANITIZE=none SANITIZE_SWEEPS=0 CTEST_SECONDS=200 OUT=/tmp/e \
  tools/h200_evidence.sh -DVMMRUN_WERROR=ON >"$out/evidence.log" 2>&1
echo "evidence exit $? at ${SECONDS}s"
cp /tmp/e/*.log "$out/" 2>/dev/null
grep -E "tests passed|Failed|FAIL|regression|scenarios,|added" "$out/evidence.log" | head -30
keep
cp build-gpu/bench/thread_scaling_bench /tmp/lean/ || exit 1
git apply -R "$lean" && cmake --build build-gpu --target thread_scaling_bench >/tmp/build_base.log 2>&1 &&
  cp build-gpu/bench/thread_scaling_bench /tmp/base/ || { echo "base build failed"; tail -20 /tmp/build_base.log; exit 1; }
echo "base built at ${SECONDS}s"
for i in 1 2 3 4; do
  for v in base lean; do
    echo "== thread_scaling_bench $v, run $i (at ${SECONDS}s)"
    timeout 60 /tmp/$v/thread_scaling_bench --threads 16 --mix map-only --cycles 500 --rounds 25 \
      --seconds 0 --setup caller --engine-hold --print-rounds >"$out/threads_${v}_$i.txt" 2>&1
    grep -v '^round' "$out/threads_${v}_$i.txt" | tail -1 | cut -c1-120
  done
done
python3 tools/pool_rounds.py base="$out/threads_base_*.txt" lean="$out/threads_lean_*.txt" \
  call1_base="reports/h200/session29/call1/threads_base_*.txt" | tee "$out/pooled.txt"
keep
echo "== the lean tree's sweep (at ${SECONDS}s)"
timeout 150 /tmp/lean/thread_scaling_bench --threads 1,2,4,8,16 --cycles 500 --rounds 10 \
  --seconds 2 --setup caller --engine-hold >"$out/sweep_lean.txt" 2>&1
cut -c1-120 "$out/sweep_lean.txt"
keep
echo "done at ${SECONDS}s"
