#!/usr/bin/env bash
# Session 24, device call 1: this session's runner (ab.patch: a long burst's records built on a
# background thread while its calls run, times shared out per chunk of 32 steps, the plan's
# has_threads flag, CUDA Create memoizing its handle and Release locking once) against the
# session's starting tree (23444e9, ab.patch reversed), one build directory, alternated:
#   runner_overhead_bench --backend cuda --cycles 1000 --rounds 48, three runs each;
#   thread_scaling_bench --cycles 1000 --rounds 9, one run each.
# The old tree's bench has no CPU-time or records-aside lines (the bench is part of the patch).
set -uo pipefail
cd "$(dirname "$0")/../../.."
here=reports/h200/session24
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
targets=(--target runner_overhead_bench --target thread_scaling_bench)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DVMMRUN_WERROR=ON "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu "${targets[@]}" >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
mkdir -p /tmp/new /tmp/old && cp build-gpu/bench/{runner_overhead,thread_scaling}_bench /tmp/new/
git apply -R "$here/ab.patch" && cmake --build build-gpu "${targets[@]}" >/tmp/build_old.log 2>&1 &&
  cp build-gpu/bench/{runner_overhead,thread_scaling}_bench /tmp/old/ &&
  git apply "$here/ab.patch" || { echo "A/B build failed"; tail -20 /tmp/build_old.log; exit 1; }
out="${OUT:-/tmp}"
for i in 1 2 3; do
  for t in old new; do
    echo "== runner_overhead_bench $t, run $i"
    timeout 100 /tmp/$t/runner_overhead_bench --backend cuda --cycles 1000 --rounds 48
  done
done >"$out/overhead_ab.txt" 2>&1
grep -E "^==|runner / driver|engine / driver|driver / driver|runner / engine|executor alone|CPU time|records aside|inside engine" \
  "$out/overhead_ab.txt"
for t in old new; do
  echo "== thread_scaling_bench $t"
  timeout 150 /tmp/$t/thread_scaling_bench --cycles 1000 --rounds 9
done >"$out/thread_ab.txt" 2>&1
cat "$out/thread_ab.txt"
