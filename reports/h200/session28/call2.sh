#!/usr/bin/env bash
# Session 28, device call 2: the hot-text A/B (#32 item 1, #30 item 4). ab_hot.patch marks the
# functions between two driver calls of a burst VMM_HOT ([[gnu::hot]]: the linker gathers them in
# .text.hot), so that the runner's path and the engine's VMM calls sit in ~7 contiguous pages of
# code instead of a dozen pages spread over 1.5 MiB (each one a possible iTLB walk after a driver
# call); SpinLock's uncontended lock is inlined, SharedEngine::IsVmm folds at compile time.
#  - runner_overhead_bench --backend cuda --cycles 1000 --rounds 96, base and hot alternated,
#    three runs each;
#  - thread_scaling_bench --threads 8,16 --setup caller, base and hot alternated, two runs each.
# Each run's output is its own file, tarred into $OUT/call2.tgz after every run.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out=/tmp/call2
mkdir -p "$out" /tmp/base /tmp/hot
keep() { tar czf "${OUT:-/tmp}/call2.tgz" -C "$out" .; }
targets="thread_scaling_bench runner_overhead_bench"
tools/h200_build.sh $targets || exit 1
cp build-gpu/bench/thread_scaling_bench build-gpu/bench/runner_overhead_bench /tmp/base/
echo "built at ${SECONDS}s"
patch=reports/h200/session28/ab_hot.patch
git apply "$patch" && cmake --build build-gpu --target $targets >/tmp/build_hot.log 2>&1 &&
  cp build-gpu/bench/thread_scaling_bench build-gpu/bench/runner_overhead_bench /tmp/hot/ ||
  { echo "A/B build failed"; tail -20 /tmp/build_hot.log; exit 1; }
git apply -R "$patch"
echo "A/B built at ${SECONDS}s"
for i in 1 2 3; do
  for v in base hot; do
    echo "== runner_overhead_bench $v, run $i (at ${SECONDS}s)"
    timeout 60 /tmp/$v/runner_overhead_bench --backend cuda --cycles 1000 --rounds 96 \
      >"$out/overhead_${v}_$i.txt" 2>&1
    grep -E "/ driver|/ engine" "$out/overhead_${v}_$i.txt"
    keep
  done
done
for i in 1 2; do
  for v in base hot; do
    echo "== thread_scaling_bench $v, run $i (at ${SECONDS}s)"
    timeout 80 /tmp/$v/thread_scaling_bench --threads 8,16 --cycles 500 --rounds 10 --seconds 2 \
      --setup caller >"$out/threads_${v}_$i.txt" 2>&1
    cut -c1-120 "$out/threads_${v}_$i.txt"
    keep
  done
done
echo "done at ${SECONDS}s"
