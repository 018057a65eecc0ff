#!/usr/bin/env bash
# Session 24, device call 3: the final tree's benchmarks, three runs each:
#   runner_overhead_bench --backend cuda --cycles 1000 --rounds 48 (runner / driver, the A/A line,
#   CPU time, records aside);
#   thread_scaling_bench --cycles 1000 --rounds 7 --seconds 6 (runner / raw and raw / raw per
#   point, each point at least 6 s).
set -uo pipefail
cd "$(dirname "$0")/../../.."
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DVMMRUN_WERROR=ON "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu --target runner_overhead_bench --target thread_scaling_bench \
    >/tmp/build.log 2>&1 || { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
out="${OUT:-/tmp}"
for i in 1 2 3; do
  echo "== runner_overhead_bench, run $i"
  timeout 60 build-gpu/bench/runner_overhead_bench --backend cuda --cycles 1000 --rounds 48
done >"$out/overhead.txt" 2>&1
grep -E "^==|runner / driver|engine / driver|driver / driver|runner / engine|CPU time|records aside" \
  "$out/overhead.txt"
for i in 1 2 3; do
  echo "== thread_scaling_bench, run $i"
  timeout 150 build-gpu/bench/thread_scaling_bench --cycles 1000 --rounds 7 --seconds 6
done >"$out/threads.txt" 2>&1
cut -c1-75 "$out/threads.txt"
