#!/usr/bin/env bash
# The recorder end to end on the GPU machine (docs/recording.md, issue #31), into $OUT:
#   1. a PyTorch program with expandable segments recorded, imported, run on both backends,
#      re-recorded while the scenario runs, and the two VMM call sequences compared;
#   2. a PyTorch program that unmaps under running kernels (vllm#43020) recorded, imported
#      (an isolate block that expects the fault), run on both backends and reduced;
#   3. the recorder's overhead: the first program with 20,000 extra launches on VMM memory, with
#      and without the recorder, alternated, RUNS times each.
# Needs a build (tools/build.sh) with the recorder (build/libvmmrun_recorder.so) and PyTorch.
set -uo pipefail
OUT=${OUT:?set OUT to a folder for the evidence}
RUNS=${RUNS:-3}
B=${VMMRUN:-build/vmm-run}
mkdir -p "$OUT"
log() { echo "+ $*"; "$@"; echo "  (exit $?)"; }
cd "$(dirname "$0")/.."

echo "== 1. expandable segments"
log $B record -o "$OUT/torch_expandable.trace" -- python3 tools/recorded/torch_expandable.py
log $B import-trace "$OUT/torch_expandable.trace" -o "$OUT/torch_expandable.yaml"
log $B "$OUT/torch_expandable.yaml" --backend cuda --report "$OUT/torch_expandable.cuda.json" -q
log $B "$OUT/torch_expandable.yaml" --backend host --report "$OUT/torch_expandable.host.json" -q
log $B record -o "$OUT/torch_expandable.replay.trace" -- \
  $B "$OUT/torch_expandable.yaml" --backend cuda --report "$OUT/replay.cuda.json" -q
log $B compare-traces "$OUT/torch_expandable.trace" "$OUT/torch_expandable.replay.trace" \
  --min-match 99

echo "== 2. unmap before sync"
log $B record -o "$OUT/unmap_before_sync.trace" -- python3 tools/recorded/torch_unmap_before_sync.py
log $B import-trace "$OUT/unmap_before_sync.trace" -o "$OUT/unmap_before_sync.yaml"
log $B "$OUT/unmap_before_sync.yaml" --backend cuda --report "$OUT/unmap_before_sync.cuda.json" -q
log $B "$OUT/unmap_before_sync.yaml" --backend host --report "$OUT/unmap_before_sync.host.json" -q
log $B reduce "$OUT/unmap_before_sync.yaml" --backend cuda --keep unmap --keep set_access \
  --budget ${REDUCE_BUDGET:-120} -o "$OUT/unmap_before_sync.reduced.yaml"
log $B "$OUT/unmap_before_sync.reduced.yaml" --backend host -q

echo "== 3. overhead (RUNS=$RUNS, alternated)"
for i in $(seq "$RUNS"); do
  for mode in plain recorded; do
    t0=$(date +%s%N)
    if [ $mode = plain ]; then
      line=$(python3 tools/recorded/torch_expandable.py --launches 20000)
    else
      line=$($B record -o "$OUT/overhead.trace" -- python3 tools/recorded/torch_expandable.py \
        --launches 20000 2>"$OUT/overhead.stderr")
    fi
    t1=$(date +%s%N)
    echo "run $i $mode: wall $(( (t1 - t0) / 1000000 )) ms; $line"
  done
done
tail -1 "$OUT/overhead.stderr"
