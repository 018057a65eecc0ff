#!/usr/bin/env bash
# Session 25, device call 3, on the final code: the threads sweep of #30 item 4 (runner <= 1.05x
# the raw threaded loop at every point), thread_scaling_bench --cycles 500 --rounds 10 --seconds 4
# over 1, 2, 4, 8 and 16 threads and both mixes, two runs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DVMMRUN_WERROR=ON "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu --target thread_scaling_bench >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
out="${OUT:-/tmp}"
for i in 1 2; do
  echo "== thread_scaling_bench, run $i (at ${SECONDS}s)"
  timeout 250 build-gpu/bench/thread_scaling_bench --cycles 500 --rounds 10 --seconds 4
done >"$out/threads.txt" 2>&1
cut -c1-90 "$out/threads.txt"
echo "done at ${SECONDS}s"
