#!/bin/sh
# CTest `recorder_gpu` (label gpu): the recorder on a real driver, without PyTorch. vmm-run runs
# scenarios/reuse.yaml on the CUDA backend under `vmm-run record`; the trace is imported as a
# scenario; that scenario runs on both backends and is recorded again; every VMM call of the first
# trace must come back, in order, in the second (compare-traces --min-match 100). Skipped (77)
# where no recorder was built or no GPU answers.
#   tests/recorder_gpu_test.sh VMMRUN RECORDER_LIBRARY WORK_DIR
set -u
B=$1 LIB=$2 W=$3
[ -f "$LIB" ] || { echo "skipped: no recorder was built (no CUPTI)"; exit 77; }
rm -rf "$W" && mkdir -p "$W" || exit 1
"$B" record --recorder "$LIB" -o "$W/reuse.trace" -- \
  "$B" scenarios/reuse.yaml --backend cuda -q --report "$W/reuse.json"
code=$?
[ $code -eq 3 ] && { echo "skipped: no GPU (the CUDA backend is unavailable)"; exit 77; }
[ $code -eq 0 ] || { echo "FAIL: the recorded run exited $code"; exit 1; }
grep -q " cuMemMap result=0 " "$W/reuse.trace" || { echo "FAIL: no cuMemMap recorded"; exit 1; }
"$B" import-trace "$W/reuse.trace" -o "$W/reuse_replay.yaml" || exit 1
"$B" "$W/reuse_replay.yaml" --backend host -q --report "$W/host.json" || exit 1
"$B" record --recorder "$LIB" -o "$W/replay.trace" -- \
  "$B" "$W/reuse_replay.yaml" --backend cuda -q --report "$W/cuda.json" || exit 1
"$B" compare-traces "$W/reuse.trace" "$W/replay.trace" --min-match 100 || exit 1
echo "recorder_gpu: passed"
