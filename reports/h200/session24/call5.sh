#!/usr/bin/env bash
# Session 24, device call 5: the records built on the background thread, on the H200. The evidence
# script runs every scenario with the console log (an observer: every step alone, no burst), so
# call 2 never took that path; with --quiet, sleep_wake_64g's bursts of 1,024 handles (and
# pages_1gib's) have their records built aside. Their reports against the H200 baselines.
set -uo pipefail
cd "$(dirname "$0")/../../.."
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DVMMRUN_WERROR=ON "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu --target vmm-run >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
out="${OUT:-/tmp}"
mkdir -p "$out/reports"
for s in sleep_wake_64g pages_1gib; do
  ./build-gpu/vmm-run "scenarios/$s.yaml" --backend cuda --quiet --report "$out/reports/$s.json"
  echo "exit $? for $s"
  ./build-gpu/vmm-run diff "reports/baselines/h200/$s.json" "$out/reports/$s.json" | tail -1
done
