#!/usr/bin/env bash
# Session 20, device call 2: unsafe_calls_in_blocks.yaml with its "map past the end" block made
# certain (the range after A is a mapped reservation B; call 1 saw the driver accept the map into
# a span freed just before, three runs of three), three runs, the first kept as the H200 baseline;
# then replay_bench on sleep_wake_64g.yaml (issue 32 item 4: each call kind of the 64 GiB cycle
# against the raw replay of the same calls in the same process, alternated; the replay now has the
# pinned snapshot, the restoring copy and memset).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
log=${OUT:-/tmp}/call2.txt
{
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    "${prefix[@]}" >/tmp/configure.log 2>&1 &&
    cmake --build build-gpu --target vmm-run replay_bench >/tmp/build.log 2>&1 ||
    { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
  for i in 1 2 3; do
    build-gpu/vmm-run run --backend cuda scenarios/unsafe_calls_in_blocks.yaml \
      --report "${OUT:-/tmp}/unsafe_calls_in_blocks.$i.json" | tail -3
    echo "exit ${PIPESTATUS[0]}"
  done
  nvidia-smi --query-gpu=memory.used,memory.total --format=csv
  timeout 420 build-gpu/bench/replay_bench scenarios/sleep_wake_64g.yaml --rounds 3
} >"$log" 2>&1
grep -E "exit|whole run|outside|not replayed|error|release|unmap|set_access|create|map |snapshot|copy" "$log"
