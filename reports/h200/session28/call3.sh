#!/usr/bin/env bash
# Session 28, device call 3, on the tree with the spinning start barrier (359e691):
#  - the evidence script (CTest with the GPU tests; every scenario against the host and H200
#    baselines; no sanitizer, no benchmarks), the tree built fresh;
#  - the barrier A/B (#30 item 4): thread_scaling_bench --threads 8,16 --setup caller, this tree
#    ("spin") against the same with runner/exec/thread_steps.cc as before it (359e691^: the group
#    woken from a condition variable, "wake"), alternated, two runs each.
# Outputs tarred into $OUT/call3.tgz after each stage (a call brings back 8 files at most).
set -uo pipefail
cd "$(dirname "$0")/../../.."
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
out=/tmp/call3
mkdir -p "$out" /tmp/e /tmp/spin /tmp/wake
keep() { tar czf "${OUT:-/tmp}/call3.tgz" -C "$out" .; }
RUN_BENCH=0 SANITIZE=none SANITIZE_SWEEPS=0 CTEST_SECONDS=230 OUT=/tmp/e \
  tools/h200_evidence.sh -DVMMRUN_WERROR=ON >"$out/evidence.log" 2>&1
echo "evidence exit $? at ${SECONDS}s"
cp /tmp/e/*.log "$out/" 2>/dev/null
grep -E "tests passed|Failed|FAIL|regression|scenarios,|added" "$out/evidence.log" | head -30
keep
cp build-gpu/bench/thread_scaling_bench /tmp/spin/
git show 359e691^:runner/exec/thread_steps.cc >runner/exec/thread_steps.cc &&
  cmake --build build-gpu --target thread_scaling_bench >/tmp/build_wake.log 2>&1 &&
  cp build-gpu/bench/thread_scaling_bench /tmp/wake/ ||
  { echo "A/B build failed"; tail -20 /tmp/build_wake.log; }
git checkout runner/exec/thread_steps.cc
echo "A/B built at ${SECONDS}s"
for i in 1 2; do
  for v in spin wake; do
    echo "== thread_scaling_bench $v, run $i (at ${SECONDS}s)"
    timeout 75 /tmp/$v/thread_scaling_bench --threads 8,16 --cycles 500 --rounds 10 --seconds 2 \
      --setup caller >"$out/threads_${v}_$i.txt" 2>&1
    cut -c1-120 "$out/threads_${v}_$i.txt"
    keep
  done
done
echo "done at ${SECONDS}s"
