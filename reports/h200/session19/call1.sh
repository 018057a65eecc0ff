#!/usr/bin/env bash
# Session 19, device call 1: the generated-scenario crosscheck after the hash change (session 18
# left it unrun), then peak RSS figures for #28 item 2: a bare CUDA context, vmm-run on
# reuse.yaml, and a 100,000-step run (20,000 page cycles in a `for` loop) on CUDA and on the twin.
set -uo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p /tmp/x
OUT=/tmp/x PROBE=0 JOBS=8 COUNT=200 SEED=190001 TIME_LIMIT=80 tools/h200_crosscheck.sh --isolate-percent 40 2>&1 | tail -40
cp /tmp/x/crosscheck.tgz "$OUT/" 2>/dev/null
nvidia-smi --query-gpu=driver_version,name --format=csv,noheader
cat >/tmp/l100k.yaml <<'Y'
version: 1
name: overhead_loop
granularity: 2MiB
buffers: {A: {shape: [1024]}}
steps:
  - {op: reserve, buffer: A, size: 2MiB}
  - for: i
    in: {range: [0, 20000]}
    steps:
      - {op: create, alloc: p, size: 2MiB}
      - {op: map, buffer: A, alloc: p}
      - {op: set_access, buffer: A}
      - {op: unmap, buffer: A}
      - {op: release, alloc: p}
  - {op: free, buffer: A}
Y
echo "== bare CUDA context (python ctypes: cuInit, primary context retained and made current)"
python3 - <<'P'
import ctypes
cu = ctypes.CDLL("libcuda.so.1")
ctx = ctypes.c_void_p()
assert cu.cuInit(0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
assert cu.cuCtxSetCurrent(ctx) == 0
free, total = ctypes.c_size_t(), ctypes.c_size_t()
cu.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total))
print([l for l in open("/proc/self/status") if l.startswith(("VmHWM", "VmRSS"))])
P
for i in 1 2; do
  echo "== reuse.yaml, cuda ($i)"; /usr/bin/time -f "max RSS %M KB, %e s" build-gpu/vmm-run run -q --backend cuda scenarios/reuse.yaml --report /tmp/reuse.json 2>&1 | tail -3
done
for b in cuda host; do
  echo "== 100,000 steps, $b"; /usr/bin/time -f "max RSS %M KB, %e s" build-gpu/vmm-run run -q --backend $b /tmp/l100k.yaml --report /tmp/l100k.$b.json 2>&1 | tail -3
done
