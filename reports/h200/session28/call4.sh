#!/usr/bin/env bash
# Session 28, device call 4 (the last ~270 s of the session's device time): the decomposition of
# map + unmap at 16 threads (#30 item 4). thread_scaling_bench --threads 16 --setup caller
# --engine-hold: the engine loop's threads call inside a context-hold bracket, as the runner's
# bursts do, so that engine / raw is the engine's share of runner / raw (near runner / raw: the gap
# is the engine's path; near 1: the executor's). As many runs as the time allows, each tarred into
# $OUT/call4.tgz as it ends.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out=/tmp/call4
mkdir -p "$out"
keep() { tar czf "${OUT:-/tmp}/call4.tgz" -C "$out" .; }
tools/h200_build.sh thread_scaling_bench || exit 1
echo "built at ${SECONDS}s"
for i in 1 2 3 4; do
  echo "== thread_scaling_bench --engine-hold, run $i (at ${SECONDS}s)"
  timeout 60 build-gpu/bench/thread_scaling_bench --threads 16 --cycles 500 --rounds 10 \
    --seconds 2 --setup caller --engine-hold >"$out/threads_hold_$i.txt" 2>&1
  cut -c1-120 "$out/threads_hold_$i.txt"
  keep
done
echo "done at ${SECONDS}s"
