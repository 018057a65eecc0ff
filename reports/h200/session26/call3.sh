#!/usr/bin/env bash
# Session 26, device call 3: A/B of ab_prefetch.patch on runner_overhead_bench --backend cuda
# (--cycles 1000 --rounds 96): RunVmmSteps prefetches the next compiled step (a line the
# background thread may have written: a cross-core read), and a burst reserves its records before
# the recorder starts (no vector growth on the background thread). This tree (new) and the patch
# reversed (old), one build directory, alternated, three runs each; each run's output its own file.
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
    timeout 90 /tmp/$t/runner_overhead_bench --backend cuda --cycles 1000 --rounds 96 \
      >"$out/overhead_${t}_$i.txt" 2>&1
    grep -E "us/step|runner / driver|engine / driver|driver / driver|runner / engine|1 thread|CPU" \
      "$out/overhead_${t}_$i.txt"
  done
done
echo "done at ${SECONDS}s"
