#!/usr/bin/env bash
# Session 21, device call 2: two A/B measurements, each pair built from one source tree in one
# build directory (patches reverted in turn) and alternated run by run.
#   - issue 30 item 4: thread_scaling_bench, 1025bed against 378e532 (the CUDA engine's mappings
#     kept per thread, the last mapped allocation memoized per thread; call 1 measured that
#     change uncommitted as exp.patch), three runs each;
#   - issue 28 item 2: runner_overhead_bench (runner / driver), 14c2077 (before this session)
#     against 378e532 (expanded steps streamed, compact Step): the item asks for no regression.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
here=reports/h200/session21
log=${OUT:-/tmp}/call2.txt
unpatch() { git apply -R "$1" 2>/dev/null || patch -R -p1 -s <"$1"; }
build() {
  cmake --build build-gpu --target runner_overhead_bench thread_scaling_bench >>/tmp/build.log 2>&1 ||
    { tail -30 /tmp/build.log; exit 1; }
  mkdir -p "/tmp/$1" && cp build-gpu/bench/runner_overhead_bench build-gpu/bench/thread_scaling_bench "/tmp/$1/"
  echo "built $1 at $(date +%T)"
}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    "${prefix[@]}" >/tmp/configure.log 2>&1 || { tail -30 /tmp/configure.log; exit 1; }
  build new
  unpatch $here/exp.patch && build head
  unpatch $here/today.patch && build old
  for i in 1 2 3; do
    for t in head new; do
      echo "== thread_scaling_bench $t, run $i"
      timeout 120 /tmp/$t/thread_scaling_bench --cycles 500 --rounds 7
    done
  done
  for i in 1 2 3; do
    for t in old new; do
      echo "== runner_overhead_bench $t, run $i"
      timeout 60 /tmp/$t/runner_overhead_bench --backend cuda --cycles 1000 --rounds 48 | grep -E "runner /|engine /|executor alone"
    done
  done
} >"$log" 2>&1
grep -E "^==|^built|^map-only|^cycle|runner /|engine /|H200" "$log" | cut -c1-110
