#!/usr/bin/env bash
# Session 29, call 1 (session 28's next_call.sh, with #32 runs after): where the
# 5.5 % of map + unmap at 16 threads lies (#30 item 4), and whether the hot-text patch moves it.
# thread_scaling_bench --threads 16 --setup caller --engine-hold (the engine loop's threads call
# inside a context-hold bracket, as the runner's bursts: engine / raw is then the engine's share
# of runner / raw; near runner / raw: the gap is the engine's path; near 1: the executor's), two
# binaries alternated, three runs each:
#  - base: this tree;
#  - hot: ab_hot.patch (VMM_HOT on the path between two driver calls; session 28 call 2 read
#    1.039, 1.054 against the base's 1.055, 1.055 at this point: three runs more to resolve it).
# Outputs tarred into $OUT/call1.tgz after every run (a call brings back 8 files at most).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out=/tmp/call1
mkdir -p "$out" /tmp/base /tmp/hot
keep() { tar czf "${OUT:-/tmp}/call1.tgz" -C "$out" .; }
tools/h200_build.sh thread_scaling_bench runner_overhead_bench || exit 1
cp build-gpu/bench/thread_scaling_bench build-gpu/bench/runner_overhead_bench /tmp/base/
echo "built at ${SECONDS}s"
patch=reports/h200/session28/ab_hot.patch
git apply "$patch" && cmake --build build-gpu --target thread_scaling_bench >/tmp/build_hot.log 2>&1 &&
  cmake --build build-gpu --target runner_overhead_bench >>/tmp/build_hot.log 2>&1 &&
  cp build-gpu/bench/thread_scaling_bench build-gpu/bench/runner_overhead_bench /tmp/hot/ ||
  { echo "A/B build failed"; tail -20 /tmp/build_hot.log; exit 1; }
git apply -R "$patch"
echo "A/B built at ${SECONDS}s"
for i in 1 2 3; do
  for v in base hot; do
    echo "== thread_scaling_bench $v, run $i (at ${SECONDS}s)"
    timeout 80 /tmp/$v/thread_scaling_bench --threads 16 --cycles 500 --rounds 10 --seconds 2 \
      --setup caller --engine-hold >"$out/threads_${v}_$i.txt" 2>&1
    cut -c1-120 "$out/threads_${v}_$i.txt"
    keep
  done
done
# #32 item 1: runner / driver, base and hot alternated, two runs each (pooled with session 28's).
for i in 1 2; do
  for v in base hot; do
    echo "== runner_overhead_bench $v, run $i (at ${SECONDS}s)"
    timeout 70 /tmp/$v/runner_overhead_bench --backend cuda --cycles 1000 --rounds 96 \
      >"$out/overhead_${v}_$i.txt" 2>&1
    grep -E "runner / driver|runner / engine|engine / driver" "$out/overhead_${v}_$i.txt"
    keep
  done
done
echo "done at ${SECONDS}s"
