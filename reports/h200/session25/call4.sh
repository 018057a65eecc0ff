#!/usr/bin/env bash
# Session 25, device call 4, right after call 3 on the same machine (its build-gpu): the threads
# sweep of #30 item 4 again, two more runs (thread_scaling_bench --cycles 500 --rounds 10
# --seconds 4).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
[ -x build-gpu/bench/thread_scaling_bench ] || tools/h200_build.sh thread_scaling_bench || exit 1
out="${OUT:-/tmp}"
for i in 1 2; do
  echo "== thread_scaling_bench, run $i (at ${SECONDS}s)"
  timeout 200 build-gpu/bench/thread_scaling_bench --cycles 500 --rounds 10 --seconds 4
done >"$out/threads.txt" 2>&1
cut -c1-90 "$out/threads.txt"
echo "done at ${SECONDS}s"
