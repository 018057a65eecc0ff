#!/usr/bin/env bash
# Session 22, device call 4: call 3's A/B again, with its ratios kept this time.
# runner_overhead_bench (--backend cuda --cycles 1000 --rounds 24), the tree with burst.patch
# (PlanStep's hot fields first, the burst compiled in place) against the same tree without it,
# built in one fresh build directory, alternated, three runs each.
set -uo pipefail
cd "$(dirname "$0")/../../.."
here=reports/h200/session22
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DVMMRUN_WERROR=ON "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu --target runner_overhead_bench >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
mkdir -p /tmp/new /tmp/old && cp build-gpu/bench/runner_overhead_bench /tmp/new/
git apply -R "$here/burst.patch" && cmake --build build-gpu --target runner_overhead_bench \
  >/tmp/build_old.log 2>&1 && cp build-gpu/bench/runner_overhead_bench /tmp/old/ &&
  git apply "$here/burst.patch" || { echo "A/B build failed"; tail -20 /tmp/build_old.log; exit 1; }
out="${OUT:-/tmp}"
for i in 1 2 3; do
  for t in old new; do
    echo "== runner_overhead_bench $t, run $i"
    timeout 80 /tmp/$t/runner_overhead_bench --backend cuda --cycles 1000 --rounds 24
  done
done >"$out/overhead_ab.txt" 2>&1
grep -E "^==|runner / driver|engine / driver|runner / engine|executor alone" "$out/overhead_ab.txt"
