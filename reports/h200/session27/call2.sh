#!/usr/bin/env bash
# Session 27, device call 2:
#  - the context-hold A/B (#30 item 4, #32 item 1): this tree (Engine::HoldContext: a burst asks
#    the driver which context is current once, not once per call) against ab_hold.patch reversed
#    (every call asks, as before), built from the same tree; thread_scaling_bench --setup caller
#    at 8 and 16 threads, and the base binary again with --raw-context-query (each raw thread asks
#    cuCtxGetCurrent before each call: does the query alone cost the raw loop its rate?),
#    alternated, two runs each;
#  - runner_overhead_bench --backend cuda --cycles 1000 --rounds 96, base against hold,
#    alternated, two runs each.
# Each run's output is its own file, tarred into $OUT/call2.tgz after every run (a call brings
# back 8 files at most; one cut short keeps the runs before it).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out=/tmp/call2
mkdir -p "$out"
keep() { tar czf "${OUT:-/tmp}/call2.tgz" -C "$out" .; }
tools/h200_build.sh thread_scaling_bench runner_overhead_bench || exit 1
echo "built at ${SECONDS}s"
patch=reports/h200/session27/ab_hold.patch
mkdir -p /tmp/base /tmp/hold
cp build-gpu/bench/thread_scaling_bench build-gpu/bench/runner_overhead_bench /tmp/hold/
git apply -R "$patch" &&
  cmake --build build-gpu --target thread_scaling_bench runner_overhead_bench \
    >/tmp/build_ab.log 2>&1 &&
  cp build-gpu/bench/thread_scaling_bench build-gpu/bench/runner_overhead_bench /tmp/base/ &&
  git apply "$patch" ||
  { echo "A/B build failed"; tail -20 /tmp/build_ab.log; exit 1; }
echo "A/B built at ${SECONDS}s"
for i in 1 2; do
  for v in base hold query; do
    bin=/tmp/$v/thread_scaling_bench extra=""
    [ "$v" = query ] && bin=/tmp/base/thread_scaling_bench extra=--raw-context-query
    echo "== thread_scaling_bench $v, run $i (at ${SECONDS}s)"
    timeout 70 $bin --threads 8,16 --cycles 500 --rounds 10 --seconds 2 --setup caller $extra \
      >"$out/threads_${v}_$i.txt" 2>&1
    cut -c1-90 "$out/threads_${v}_$i.txt"
    keep
  done
done
for i in 1 2; do
  for v in base hold; do
    echo "== runner_overhead_bench $v, run $i (at ${SECONDS}s)"
    timeout 60 /tmp/$v/runner_overhead_bench --backend cuda --cycles 1000 --rounds 96 \
      >"$out/overhead_${v}_$i.txt" 2>&1
    grep -E "/ driver|/ engine" "$out/overhead_${v}_$i.txt"
    keep
  done
done
echo "done at ${SECONDS}s"
