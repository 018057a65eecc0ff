#!/usr/bin/env bash
# Prepared in session 27 for the next session's first device call (it has NOT run yet):
#  - thread_scaling_bench --setup caller at 8 and 16 threads with its two new readings (engine /
#    raw: std::threads calling the runner's engine from a loop timed as the raw one; each side's
#    first thread's end over its last's), this tree against ab_direct.patch (a threads group's VMM
#    calls go to the engine under SharedEngine straight, one virtual call sooner), alternated, two
#    runs each;
#  - runner_overhead_bench --backend cuda --cycles 1000 --rounds 96, the same two, two runs each.
# Outputs tarred into $OUT/next.tgz after every run (a call brings back 8 files at most).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out=/tmp/next
mkdir -p "$out"
keep() { tar czf "${OUT:-/tmp}/next.tgz" -C "$out" .; }
tools/h200_build.sh thread_scaling_bench runner_overhead_bench || exit 1
echo "built at ${SECONDS}s"
patch=reports/h200/session27/ab_direct.patch
mkdir -p /tmp/base /tmp/direct
cp build-gpu/bench/thread_scaling_bench build-gpu/bench/runner_overhead_bench /tmp/base/
git apply "$patch" &&
  cmake --build build-gpu --target thread_scaling_bench runner_overhead_bench \
    >/tmp/build_ab.log 2>&1 &&
  cp build-gpu/bench/thread_scaling_bench build-gpu/bench/runner_overhead_bench /tmp/direct/ &&
  git apply -R "$patch" ||
  { echo "A/B build failed"; tail -20 /tmp/build_ab.log; exit 1; }
echo "A/B built at ${SECONDS}s"
for i in 1 2; do
  for v in base direct; do
    echo "== thread_scaling_bench $v, run $i (at ${SECONDS}s)"
    timeout 90 /tmp/$v/thread_scaling_bench --threads 8,16 --cycles 500 --rounds 10 --seconds 2 \
      --setup caller >"$out/threads_${v}_$i.txt" 2>&1
    cut -c1-120 "$out/threads_${v}_$i.txt"
    keep
  done
done
for i in 1 2; do
  for v in base direct; do
    echo "== runner_overhead_bench $v, run $i (at ${SECONDS}s)"
    timeout 60 /tmp/$v/runner_overhead_bench --backend cuda --cycles 1000 --rounds 96 \
      >"$out/overhead_${v}_$i.txt" 2>&1
    grep -E "/ driver|/ engine" "$out/overhead_${v}_$i.txt"
    keep
  done
done
echo "done at ${SECONDS}s"
