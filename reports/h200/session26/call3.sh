#!/usr/bin/env bash
# Session 26, device call 3 (the first version of this script, an A/B of ab_prefetch.patch with
# the evidence after it, found no machine twice, and the device time left no longer held both; the
# patch is out of the tree): is where the pages and allocations are made part of the runner's
# ratio at 8 and 16 threads? thread_scaling_bench --threads 8,16 --cycles 500 --rounds 10
# --seconds 2, with the raw loop's pages set up by each of its threads (as before) and by the
# calling thread (--setup caller, as the runner's scenario makes them in steps before its threads
# group), alternated (the caller first), two runs each; each run's output its own file under $OUT.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out="${OUT:-/tmp}"
tools/h200_build.sh thread_scaling_bench || exit 1
echo "built at ${SECONDS}s"
for i in 1 2; do
  for setup in caller threads; do
    echo "== thread_scaling_bench --setup $setup, run $i (at ${SECONDS}s)"
    timeout 80 build-gpu/bench/thread_scaling_bench --threads 8,16 --cycles 500 --rounds 10 \
      --seconds 2 --setup "$setup" >"$out/threads_${setup}_$i.txt" 2>&1
    cut -c1-90 "$out/threads_${setup}_$i.txt"
  done
done
echo "done at ${SECONDS}s"
