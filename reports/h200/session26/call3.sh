#!/usr/bin/env bash
# Session 26, device call 3: A/B of ab_prefetch.patch on runner_overhead_bench --backend cuda
# (--cycles 1000 --rounds 64): RunVmmSteps prefetches the next compiled step (a line the
# background thread may have written: a cross-core read), and a burst reserves its records before
# the recorder starts (no vector growth on the background thread). This tree (new) and the patch
# reversed (old), one build directory, alternated, three runs each; each run's output its own file.
# Then, on this tree:
#  - the evidence script (CTest with the GPU tests, every scenario against the host and H200
#    baselines; no sanitizer, no benchmarks; its summary log straight to $OUT/e, so a call cut
#    short by the device budget keeps what ran);
#  - thread_scaling_bench --threads 8,16 with the raw loop's pages set up by each thread (as
#    before) and by the calling thread (--setup caller, as the runner's scenario does): is where
#    the pages and allocations are made part of the runner's ratio at 8 and 16 threads?
#  - generated scenarios (8 jobs x 20 s, seed 2602).
# Call 4 (call4.sh) is the same evidence alone, for when this call cannot finish it.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out="${OUT:-/tmp}"
patch=reports/h200/session26/ab_prefetch.patch
tools/h200_build.sh runner_overhead_bench || exit 1
mkdir -p /tmp/new /tmp/old && cp build-gpu/bench/runner_overhead_bench /tmp/new/
git apply -R "$patch" &&
  cmake --build build-gpu --target runner_overhead_bench >/tmp/build_old.log 2>&1 &&
  cp build-gpu/bench/runner_overhead_bench /tmp/old/ && git apply "$patch" ||
  { echo "A/B build failed"; tail -20 /tmp/build_old.log; exit 1; }
echo "built at ${SECONDS}s"
for i in 1 2 3; do
  for t in old new; do
    echo "== runner_overhead_bench $t, run $i (at ${SECONDS}s)"
    timeout 90 /tmp/$t/runner_overhead_bench --backend cuda --cycles 1000 --rounds 64 \
      >"$out/overhead_${t}_$i.txt" 2>&1
    grep -E "us/step|runner / driver|engine / driver|driver / driver|runner / engine|1 thread|CPU" \
      "$out/overhead_${t}_$i.txt"
  done
done
echo "A/B done at ${SECONDS}s"
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$out/e" /tmp/e
RUN_BENCH=0 SANITIZE=none SANITIZE_SWEEPS=0 CTEST_SECONDS=200 OUT=/tmp/e \
  tools/h200_evidence.sh -DVMMRUN_WERROR=ON >"$out/e/evidence.log" 2>&1
echo "evidence exit $? at ${SECONDS}s"
for f in run ctest; do gzip -c /tmp/e/$f.log >"$out/e/$f.log.gz" 2>/dev/null; done
grep -E "tests passed|Failed|FAIL|regression|scenarios,|added" "$out/e/evidence.log" | head -30
for setup in threads caller; do
  echo "== thread_scaling_bench --setup $setup (at ${SECONDS}s)"
  timeout 80 build-gpu/bench/thread_scaling_bench --threads 8,16 --cycles 500 --rounds 10 \
    --seconds 2 --setup "$setup" >"$out/threads_setup_$setup.txt" 2>&1
  cut -c1-90 "$out/threads_setup_$setup.txt"
done
PROBE=0 JOBS=8 COUNT=200 SEED=2602 TIME_LIMIT=20 OUT="$out" tools/h200_crosscheck.sh \
  --isolate-percent 40 2>&1 | tail -6
echo "all done at ${SECONDS}s"
