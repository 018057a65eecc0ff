#!/usr/bin/env bash
# Session 28, device call 1 (prepared in session 27 as next_call.sh):
# thread_scaling_bench --setup caller at 8 and 16 threads with its two new readings (engine / raw:
# std::threads calling the runner's engine from a loop timed as the raw one; each side's first
# thread's end over its last's), three binaries alternated, two runs each:
#  - base: this tree;
#  - direct: ab_direct.patch (a threads group's VMM calls go to the engine under SharedEngine
#    straight, one virtual call sooner);
#  - tail: ab_tail.patch (a thread that has made its last call waits for the others before it
#    builds its records, so that no bookkeeping runs beside the others' driver calls).
# Neither patch touches a run without threads, so runner_overhead_bench is not run.
# Outputs tarred into $OUT/call1.tgz after every run (a call brings back 8 files at most).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out=/tmp/call1
mkdir -p "$out"
keep() { tar czf "${OUT:-/tmp}/call1.tgz" -C "$out" .; }
tools/h200_build.sh thread_scaling_bench || exit 1
echo "built at ${SECONDS}s"
mkdir -p /tmp/base && cp build-gpu/bench/thread_scaling_bench /tmp/base/
for v in direct tail; do
  patch=reports/h200/session27/ab_$v.patch
  mkdir -p /tmp/$v
  git apply "$patch" &&
    cmake --build build-gpu --target thread_scaling_bench >/tmp/build_$v.log 2>&1 &&
    cp build-gpu/bench/thread_scaling_bench /tmp/$v/ && git apply -R "$patch" ||
    { echo "A/B build of $v failed"; tail -20 /tmp/build_$v.log; exit 1; }
done
echo "A/B built at ${SECONDS}s"
for i in 1 2; do
  for v in base direct tail; do
    echo "== thread_scaling_bench $v, run $i (at ${SECONDS}s)"
    timeout 90 /tmp/$v/thread_scaling_bench --threads 8,16 --cycles 500 --rounds 10 --seconds 2 \
      --setup caller >"$out/threads_${v}_$i.txt" 2>&1
    cut -c1-120 "$out/threads_${v}_$i.txt"
    keep
  done
done
echo "done at ${SECONDS}s"
