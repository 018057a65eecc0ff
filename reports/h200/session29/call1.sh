#!/usr/bin/env bash
# Session 29, call 1: where the 5.5 % of map + unmap at 16 threads lies (#30 item 4), with the
# power to see 1 %: rounds pooled over many short runs (thread_scaling_bench --print-rounds).
#  - thread_scaling_bench --threads 16 --mix map-only --setup caller --engine-hold, 25 rounds a
#    run, five runs of each binary alternated (125 rounds each). --engine-hold brackets the engine
#    loop's threads as the runner's bursts: engine / raw is then the engine's share of runner /
#    raw (near it: the gap is the engine's path; near 1: the executor's).
#  - binaries: base (this tree); pack (ab_pack.patch: what a memory call reads of the engine on
#    one cache line, the lane's busy counters beside its context, one lane asked alone); hotpack
#    (pack + ../session28/ab_hot.patch, the path's code gathered into 25 KiB); tail
#    (ab_tail.patch: a thread that ends early builds its records only once every thread has
#    ended, so no malloc runs beside the others' driver calls; session 27's A/B of it, two runs
#    each, could not resolve it).
#  - runner_overhead_bench --backend cuda --cycles 1000 --rounds 96 (#32 item 1), base and
#    hotpack alternated, two runs each.
# Outputs tarred into $OUT/call1.tgz after every run (a call brings back 8 files at most).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out=/tmp/call1
mkdir -p "$out" /tmp/base /tmp/pack /tmp/hotpack /tmp/tail
keep() { tar czf "${OUT:-/tmp}/call1.tgz" -C "$out" .; }
benches=(thread_scaling_bench runner_overhead_bench)
tools/h200_build.sh "${benches[@]}" || exit 1
for b in "${benches[@]}"; do cp "build-gpu/bench/$b" /tmp/base/; done
echo "built at ${SECONDS}s"
build_variant() {  # build_variant DIR PATCH...: the benches with the patches applied, then reverted
  local dir=$1 ok=1
  shift
  for p in "$@"; do git apply "$p" || ok=0; done
  if [ $ok = 1 ] && cmake --build build-gpu --target "${benches[@]}" >"/tmp/build_$(basename "$dir").log" 2>&1; then
    for b in "${benches[@]}"; do cp "build-gpu/bench/$b" "$dir/"; done
  else
    ok=0
    tail -20 "/tmp/build_$(basename "$dir").log"
  fi
  for ((k = $#; k >= 1; k--)); do git apply -R "${!k}"; done
  [ $ok = 1 ]
}
pack=reports/h200/session29/ab_pack.patch
hot=reports/h200/session28/ab_hot.patch
build_variant /tmp/pack "$pack" || { echo "pack build failed"; exit 1; }
build_variant /tmp/hotpack "$pack" "$hot" || { echo "hotpack build failed"; exit 1; }
build_variant /tmp/tail reports/h200/session29/ab_tail.patch || { echo "tail build failed"; exit 1; }
echo "A/B built at ${SECONDS}s"
for i in 1 2 3 4 5; do
  for v in base pack hotpack tail; do
    echo "== thread_scaling_bench $v, run $i (at ${SECONDS}s)"
    timeout 60 /tmp/$v/thread_scaling_bench --threads 16 --mix map-only --cycles 500 --rounds 25 \
      --seconds 0 --setup caller --engine-hold --print-rounds >"$out/threads_${v}_$i.txt" 2>&1
    grep -v '^round' "$out/threads_${v}_$i.txt" | tail -1 | cut -c1-120
  done
  keep
done
python3 tools/pool_rounds.py base="$out/threads_base_*.txt" pack="$out/threads_pack_*.txt" \
  hotpack="$out/threads_hotpack_*.txt" tail="$out/threads_tail_*.txt" | tee "$out/pooled.txt"
echo "threads done at ${SECONDS}s"
for i in 1 2; do
  for v in base hotpack; do
    echo "== runner_overhead_bench $v, run $i (at ${SECONDS}s)"
    timeout 70 /tmp/$v/runner_overhead_bench --backend cuda --cycles 1000 --rounds 96 \
      >"$out/overhead_${v}_$i.txt" 2>&1
    grep -E "runner / driver|runner / engine|engine / driver" "$out/overhead_${v}_$i.txt"
    keep
  done
done
echo "done at ${SECONDS}s"
