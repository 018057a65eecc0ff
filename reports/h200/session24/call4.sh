#!/usr/bin/env bash
# Session 24, device call 4: did this session slow a threads group down? Call 3 had map + unmap on
# 4 threads at 1.058, 1.089 and 1.084 of the raw loop (A/A 1.002-1.005), where calls before had
# 1.002-1.043. This tree against 23444e9 (ab_threads.patch reversed), one build directory,
# alternated three times: thread_scaling_bench --threads 4 --cycles 300 --rounds 20 --seconds 3
# (the old bench ignores --seconds: its floor is 3 s too).
set -uo pipefail
cd "$(dirname "$0")/../../.."
here=reports/h200/session24
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DVMMRUN_WERROR=ON "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu --target thread_scaling_bench >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
mkdir -p /tmp/new /tmp/old && cp build-gpu/bench/thread_scaling_bench /tmp/new/
git apply -R "$here/ab_threads.patch" &&
  cmake --build build-gpu --target thread_scaling_bench >/tmp/build_old.log 2>&1 &&
  cp build-gpu/bench/thread_scaling_bench /tmp/old/ && git apply "$here/ab_threads.patch" ||
  { echo "A/B build failed"; tail -20 /tmp/build_old.log; exit 1; }
out="${OUT:-/tmp}"
for i in 1 2 3; do
  for t in old new; do
    echo "== thread_scaling_bench $t, run $i"
    timeout 60 /tmp/$t/thread_scaling_bench --threads 4 --cycles 300 --rounds 20 --seconds 3
  done
done >"$out/threads_ab.txt" 2>&1
cut -c1-75 "$out/threads_ab.txt"
