#!/usr/bin/env bash
# Session 13, call 2: the evidence run on the tree with busy flags, context: none threads and the
# together start barrier; then the GPU tests of those, and the race scenarios 5 times each.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
: "${OUT:?}"
mkdir -p "$OUT/e"
RUN_BENCH=0 SANITIZE=none SANITIZE_SWEEPS=0 CTEST_SECONDS=200 OUT=$OUT/e tools/h200_evidence.sh -DVMMRUN_WERROR=ON | tail -12
./build-gpu/runner/engine/cuda/vmm_gpu_tests --gtest_filter='*Busy*:*WithoutAContext*' > "$OUT/e/gpu_busy_tests.log" 2>&1
echo "gpu busy tests: exit $?, $(grep -E 'PASSED|FAILED' "$OUT/e/gpu_busy_tests.log" | tr '\n' ' ')"
for s in unmap_from_another_thread zero_page_remap_race set_access_busy_stream map_without_context unmap_under_reader; do
  pass=0
  for i in 1 2 3 4 5; do
    ./build-gpu/vmm-run "scenarios/$s.yaml" --backend cuda --report "$OUT/e/$s.$i.json" > "$OUT/e/$s.$i.log" 2>&1 && pass=$((pass + 1))
  done
  echo "$s: $pass of 5 passed; $(grep -ho "Fault is of type [A-Z_ ]*" "$OUT"/e/$s.*.log | sort | uniq -c | tr "\n" " ")"
done
grep -E 'tests passed|tests failed' "$OUT/e/ctest.log"
grep -E '^\s+[0-9]+ - ' "$OUT/e/ctest.log" | head
# The runner's overhead at one thread, top level against a threads group, on the same machine.
./build-gpu/bench/thread_scaling_bench --cycles 200 --rounds 5 --threads 1 > "$OUT/e/thread_scaling_1.txt" 2>&1
./build-gpu/bench/runner_overhead_bench --backend cuda --cycles 200 --rounds 16 > "$OUT/e/overhead_200.txt" 2>&1
tail -4 "$OUT/e/thread_scaling_1.txt"; tail -3 "$OUT/e/overhead_200.txt"
command -v perf && perf --version
