#!/usr/bin/env bash
# Session 19, device call 6: unsafe_calls_in_blocks.yaml with its "map past the end" block
# reserving its range at the start of a freed 8 MiB span (call 5 saw the map accepted when the
# range, taken wherever the driver put it, ended where the engine's own scratch began): three
# runs, the first kept as the H200 baseline.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu --target vmm-run >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
for i in 1 2 3; do
  build-gpu/vmm-run run --backend cuda scenarios/unsafe_calls_in_blocks.yaml \
    --report "${OUT:-/tmp}/unsafe_calls_in_blocks.$i.json" | grep -E "result|past|honoured|4 MiB"
  echo "exit $?"
done
