#!/usr/bin/env bash
# Session 22, device call 3:
#   - what memcheck's 106,370 errors on kernel_copy (call 2) are. The scenario's isolated child
#     replays a kernel node into read-only memory on purpose, and memcheck follows child
#     processes. kernel_copy and readonly_fault (a fill through a read-only mapping, the same kind
#     of planned fault) with the parent alone checked (--target-processes application-only: an
#     error there would be vmm-run's own), then with every process and the first errors printed;
#   - generated scenarios after the generator learnt to point an updated kernel copy elsewhere
#     (tools/h200_crosscheck.sh, 8 jobs x 30 s, seed 2203);
#   - runner_overhead_bench, the tree with burst.patch (PlanStep's hot fields first, the burst
#     compiled in place) against the same tree without it, built in one build directory,
#     alternated, three runs each.
# A fresh build directory: the machine keeps ignored build outputs between calls, and a tree
# copied with older times than those outputs is not rebuilt (the first two tries of this call).
set -uo pipefail
rm -rf "$(dirname "$0")/../../../build-gpu"
cd "$(dirname "$0")/../../.."
here=reports/h200/session22
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DVMMRUN_WERROR=ON "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu --target vmm-run runner_overhead_bench >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
mkdir -p /tmp/new /tmp/old && cp build-gpu/bench/runner_overhead_bench /tmp/new/
out="${OUT:-/tmp}"
for s in kernel_copy; do
  compute-sanitizer --tool memcheck --leak-check full --target-processes application-only \
    ./build-gpu/vmm-run scenarios/$s.yaml --report /tmp/$s.json >"$out/$s.parent.log" 2>&1
  echo "$s, parent only: exit $?, $(grep 'ERROR SUMMARY' "$out/$s.parent.log" | tail -1)"
  compute-sanitizer --tool memcheck --leak-check full --target-processes all --print-limit 4 \
    ./build-gpu/vmm-run scenarios/$s.yaml --report /tmp/$s.json >"$out/$s.all.log" 2>&1
  echo "$s, every process: exit $?, $(grep 'ERROR SUMMARY' "$out/$s.all.log" | tail -2 | tr '\n' ' ')"
  grep -E "Invalid|at .*vmm_|by thread|Address 0x" "$out/$s.all.log" | sort | uniq -c | sort -rn | head -6
done
PROBE=0 JOBS=8 COUNT=200 SEED=2203 TIME_LIMIT=30 OUT="$out" tools/h200_crosscheck.sh \
  --isolate-percent 40 2>&1 | grep -E "^summary|disagree" | tail -10
git apply -R "$here/burst.patch" && cmake --build build-gpu --target runner_overhead_bench \
  >/tmp/build_old.log 2>&1 && cp build-gpu/bench/runner_overhead_bench /tmp/old/ &&
  git apply "$here/burst.patch" || { echo "A/B build failed"; tail -20 /tmp/build_old.log; exit 1; }
for i in 1 2 3; do
  for t in old new; do
    echo "== runner_overhead_bench $t, run $i"
    timeout 60 /tmp/$t/runner_overhead_bench --backend cuda --cycles 1000 --rounds 16 | tail -4
  done
done 2>&1 | tee "$out/overhead_ab.txt" | grep -E "^==|runner / driver|engine / driver|executor alone"
