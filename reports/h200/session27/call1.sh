#!/usr/bin/env bash
# Session 27, device call 1:
#  - the gap test (#30 item 4): thread_scaling_bench --setup caller at 8 and 16 threads with each
#    raw thread spinning G ns after each call, G = 0, 200, 1000, alternated, two runs each (the
#    runner is the same in every run, so runner / raw falling with G means the raw loop slowed);
#    the G = 0 runs also at 1 thread (p50 per op: the runner's time between calls, uncontended);
#  - the prefetch A/B (#32 item 1): runner_overhead_bench --backend cuda --cycles 1000 --rounds
#    96, this tree against ab_prefetch.patch (the run's thread prefetches the next compiled step),
#    alternated, two runs each.
# Each run's output is its own file under $OUT, so a call cut short keeps the ones before it.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out="${OUT:-/tmp}"
tools/h200_build.sh thread_scaling_bench runner_overhead_bench || exit 1
echo "built at ${SECONDS}s"
patch=reports/h200/session27/ab_prefetch.patch
mkdir -p /tmp/base /tmp/prefetch && cp build-gpu/bench/runner_overhead_bench /tmp/base/
git apply "$patch" &&
  cmake --build build-gpu --target runner_overhead_bench >/tmp/build_ab.log 2>&1 &&
  cp build-gpu/bench/runner_overhead_bench /tmp/prefetch/ && git apply -R "$patch" ||
  { echo "A/B build failed"; tail -20 /tmp/build_ab.log; exit 1; }
echo "A/B built at ${SECONDS}s"
for i in 1 2; do
  for g in 0 200 1000; do
    threads=8,16
    [ "$g" = 0 ] && threads=1,8,16
    echo "== thread_scaling_bench --raw-gap-ns $g, run $i (at ${SECONDS}s)"
    timeout 70 build-gpu/bench/thread_scaling_bench --threads $threads --cycles 500 --rounds 10 \
      --seconds 2 --setup caller --raw-gap-ns $g >"$out/threads_gap${g}_$i.txt" 2>&1
    cut -c1-90 "$out/threads_gap${g}_$i.txt"
  done
done
for i in 1 2; do
  for v in base prefetch; do
    echo "== runner_overhead_bench $v, run $i (at ${SECONDS}s)"
    timeout 60 /tmp/$v/runner_overhead_bench --backend cuda --cycles 1000 --rounds 96 \
      >"$out/overhead_${v}_$i.txt" 2>&1
    grep -E "/ driver|/ engine" "$out/overhead_${v}_$i.txt"
  done
done
echo "done at ${SECONDS}s"
