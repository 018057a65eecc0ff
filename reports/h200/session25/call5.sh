#!/usr/bin/env bash
# Session 25, device call 5: is the raw threaded loop's own bookkeeping part of the runner's ratio
# at 8 and 16 threads? ab_raw.patch makes the raw loop store each latency in room made before the
# barrier (a clock read and a store between calls, as the runner), where it built a std::string
# key and looked it up in a std::map per call. thread_scaling_bench --threads 8,16 --cycles 500
# --rounds 10 --seconds 2, the lean loop (this tree) and the old one (ab_raw.patch reversed)
# alternated, two runs each; each run's output is its own file, so a run cut short by the device
# budget still leaves the ones before it.
set -uo pipefail
cd "$(dirname "$0")/../../.."
here=reports/h200/session25
export NCCL_NVLS_ENABLE=0
tools/h200_build.sh thread_scaling_bench || exit 1
mkdir -p /tmp/new /tmp/old && cp build-gpu/bench/thread_scaling_bench /tmp/new/
git apply -R "$here/ab_raw.patch" &&
  cmake --build build-gpu --target thread_scaling_bench >/tmp/build_old.log 2>&1 &&
  cp build-gpu/bench/thread_scaling_bench /tmp/old/ && git apply "$here/ab_raw.patch" ||
  { echo "A/B build failed"; tail -20 /tmp/build_old.log; exit 1; }
out="${OUT:-/tmp}"
for i in 1 2; do
  for t in old new; do
    echo "== thread_scaling_bench $t, run $i (at ${SECONDS}s)"
    timeout 60 /tmp/$t/thread_scaling_bench --threads 8,16 --cycles 500 --rounds 10 --seconds 2 \
      >"$out/threads_${t}_$i.txt" 2>&1
    cut -c1-90 "$out/threads_${t}_$i.txt"
  done
done
echo "done at ${SECONDS}s"
