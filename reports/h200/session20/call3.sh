#!/usr/bin/env bash
# Session 20, device call 3 (tree 7f78aa3): issue 32 item 4, the 64 GiB sleep/wake cycle per call
# kind against the raw replay of the same calls: replay_bench on sleep_wake_64g.yaml, 5 rounds
# (the run and the raw replay alternating first), in two processes; each op's ratio of medians
# with the range of its per-round ratios.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
log=${OUT:-/tmp}/call3.txt
{
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    "${prefix[@]}" >/tmp/configure.log 2>&1 &&
    cmake --build build-gpu --target replay_bench >/tmp/build.log 2>&1 ||
    { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
  for run in 1 2; do
    echo "== process $run"
    timeout 250 build-gpu/bench/replay_bench scenarios/sleep_wake_64g.yaml --rounds 5
  done
} >"$log" 2>&1
grep -E "==|whole run|release|unmap|set_access|create|^map |snapshot|copy|memset|error" "$log"
