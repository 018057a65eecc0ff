#!/usr/bin/env bash
# Session 23, device call 1: where the runner's time outside the driver calls goes on the H200.
# runner_overhead_bench (--backend cuda --cycles 1000 --rounds 24) built with knobs.patch, whose
# XSKIP bits skip parts of the executor's work after a burst (an experiment, never committed):
#   0 as committed; 8 the burst compiled once and copied (as a plan compiled ahead would);
#   3 no record identity or fields (empty records); 11 = 3 + 8; 27 = 11 and no records at all.
# Five variants, alternated, three runs each: what a lighter record could save at most.
set -uo pipefail
cd "$(dirname "$0")/../../.."
here=reports/h200/session23
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
git apply "$here/knobs.patch" || { echo "patch failed"; exit 1; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DVMMRUN_WERROR=ON "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu --target runner_overhead_bench >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
out="${OUT:-/tmp}"
for i in 1 2 3; do
  for x in 0 8 3 11 27; do
    echo "== runner_overhead_bench XSKIP=$x, run $i"
    XSKIP=$x timeout 80 build-gpu/bench/runner_overhead_bench --backend cuda --cycles 1000 --rounds 24
  done
done >"$out/knobs.txt" 2>&1
grep -E "^==|runner / driver|engine / driver|runner / engine|inside|outside|executor alone" "$out/knobs.txt"
