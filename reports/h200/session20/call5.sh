#!/usr/bin/env bash
# Session 20, device call 5 (tree b51faa2): the GPU tests after the elementwise tests changed (a
# captured axpy is one kernel node whose driver-read arguments equal the host twin's packing), and
# the graph and kernel-registry tests; then replay_bench once on graph_elementwise.yaml.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
log=${OUT:-/tmp}/call5.txt
{
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DVMMRUN_WERROR=ON "${prefix[@]}" >/tmp/configure.log 2>&1 &&
    cmake --build build-gpu >/tmp/build.log 2>&1 ||
    { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
  (cd build-gpu && ctest -L gpu -j4 --timeout 200 2>&1 | tail -8)
  (cd build-gpu && ctest -R "Elementwise|HostGraph" 2>&1 | tail -4)
  build-gpu/bench/replay_bench scenarios/graph_elementwise.yaml --rounds 5
} >"$log" 2>&1
cat "$log" | tail -40
