#!/usr/bin/env bash
# Session 22, device call 3: what memcheck's 106,370 errors on kernel_copy (call 2) are. The
# scenario's isolated child replays a kernel node into read-only memory on purpose; memcheck
# follows child processes. Here: kernel_copy and readonly_fault (a fill through a read-only
# mapping, the same kind of planned fault) with the parent alone checked
# (--target-processes application-only: errors there would be vmm-run's own), then with every
# process and the first errors printed.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DVMMRUN_WERROR=ON "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu --target vmm-run >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
out="${OUT:-/tmp}"
for s in kernel_copy readonly_fault; do
  compute-sanitizer --tool memcheck --leak-check full --target-processes application-only \
    ./build-gpu/vmm-run scenarios/$s.yaml --report /tmp/$s.json >"$out/$s.parent.log" 2>&1
  echo "$s, parent only: exit $?, $(grep 'ERROR SUMMARY' "$out/$s.parent.log" | tail -1)"
  compute-sanitizer --tool memcheck --leak-check full --target-processes all --print-limit 4 \
    ./build-gpu/vmm-run scenarios/$s.yaml --report /tmp/$s.json >"$out/$s.all.log" 2>&1
  echo "$s, every process: exit $?, $(grep 'ERROR SUMMARY' "$out/$s.all.log" | tail -2 | tr '\n' ' ')"
  grep -E "Invalid|at .*vmm_|by thread|Address 0x" "$out/$s.all.log" | sort | uniq -c | sort -rn | head -6
done
# Then generated scenarios after the generator learnt to point an updated kernel copy elsewhere.
PROBE=0 JOBS=8 COUNT=200 SEED=2203 TIME_LIMIT=55 OUT="$out" tools/h200_crosscheck.sh \
  --isolate-percent 40 2>&1 | tail -4
