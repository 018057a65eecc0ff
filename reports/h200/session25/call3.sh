#!/usr/bin/env bash
# Session 25, device call 3, on the final code (call 2's build-gpu where the machine kept it): the
# threads sweep of #30 item 4 (runner <= 1.05x the raw threaded loop at every point),
# thread_scaling_bench --cycles 500 --rounds 10 --seconds 4 over 1, 2, 4, 8 and 16 threads and
# both mixes, one run; then runner_overhead_bench --backend cuda --cycles 1000 --rounds 48, three
# more runs (#32 item 1).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
[ -x build-gpu/bench/thread_scaling_bench ] && [ -x build-gpu/bench/runner_overhead_bench ] ||
  tools/h200_build.sh thread_scaling_bench runner_overhead_bench || exit 1
out="${OUT:-/tmp}"
echo "== thread_scaling_bench (at ${SECONDS}s)" >"$out/threads.txt"
timeout 300 build-gpu/bench/thread_scaling_bench --cycles 500 --rounds 10 --seconds 4 \
  >>"$out/threads.txt" 2>&1
cut -c1-90 "$out/threads.txt"
for i in 1 2 3; do
  echo "== runner_overhead_bench --backend cuda, run $i (at ${SECONDS}s)"
  timeout 60 build-gpu/bench/runner_overhead_bench --backend cuda --cycles 1000 --rounds 48
done >"$out/overhead.txt" 2>&1
grep -E "^==|per step|runner / driver|engine / driver|driver / driver|runner / engine|inside engine" \
  "$out/overhead.txt"
echo "done at ${SECONDS}s"
