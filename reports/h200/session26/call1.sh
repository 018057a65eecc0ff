#!/usr/bin/env bash
# Session 26, device call 1:
#  - session 25's call 5, which found no device time: the raw threaded loop's A/B at 8 and 16
#    threads (thread_scaling_bench --threads 8,16 --cycles 500 --rounds 10 --seconds 2), the lean
#    loop (this tree) and the old one (session25/ab_raw.patch reversed) alternated, two runs each;
#  - runner_overhead_bench on CUDA, three runs of 96 rounds (was 48: the per-round ratios range
#    over ±15 %, so the median's resolution was about a point), with the new variant "runner,
#    1 thread" (the bench holds the background thread: what the second thread buys on this host);
#  - the same on the spin engine, once.
# Each run's output is its own file under $OUT, so a call cut short keeps the ones before it.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out="${OUT:-/tmp}"
tools/h200_build.sh thread_scaling_bench runner_overhead_bench || exit 1
echo "built at ${SECONDS}s"
patch=reports/h200/session25/ab_raw.patch
mkdir -p /tmp/new /tmp/old && cp build-gpu/bench/thread_scaling_bench /tmp/new/
git apply -R "$patch" &&
  cmake --build build-gpu --target thread_scaling_bench >/tmp/build_old.log 2>&1 &&
  cp build-gpu/bench/thread_scaling_bench /tmp/old/ && git apply "$patch" ||
  { echo "A/B build failed"; tail -20 /tmp/build_old.log; exit 1; }
for i in 1 2; do
  for t in old new; do
    echo "== thread_scaling_bench $t, run $i (at ${SECONDS}s)"
    timeout 60 /tmp/$t/thread_scaling_bench --threads 8,16 --cycles 500 --rounds 10 --seconds 2 \
      >"$out/threads_${t}_$i.txt" 2>&1
    cut -c1-90 "$out/threads_${t}_$i.txt"
  done
done
for i in 1 2 3; do
  echo "== runner_overhead_bench --backend cuda, run $i (at ${SECONDS}s)"
  timeout 120 build-gpu/bench/runner_overhead_bench --backend cuda --cycles 1000 --rounds 96 \
    >"$out/overhead_$i.txt" 2>&1
  cat "$out/overhead_$i.txt"
done
echo "== runner_overhead_bench --backend spin (at ${SECONDS}s)"
timeout 60 build-gpu/bench/runner_overhead_bench --backend spin --cycles 1000 --rounds 24 \
  >"$out/overhead_spin.txt" 2>&1
cat "$out/overhead_spin.txt"
echo "done at ${SECONDS}s"
