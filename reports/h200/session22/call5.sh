#!/usr/bin/env bash
# Session 22, device call 5: after the Axpy engine call was folded into LaunchKernel, the GPU data
# tests (the elementwise kernels against the CPU bit for bit, captured nodes read back) and the
# graph_elementwise scenario against its H200 baseline.
set -uo pipefail
cd "$(dirname "$0")/../../.."
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DVMMRUN_WERROR=ON "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu --target vmm_gpu_tests vmm-run >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
./build-gpu/runner/engine/cuda/vmm_gpu_tests --gtest_filter='CudaDataTest.*' 2>&1 | tail -3
./build-gpu/vmm-run scenarios/graph_elementwise.yaml --quiet --report /tmp/ge.json | tail -1
./build-gpu/vmm-run diff reports/baselines/h200/graph_elementwise.json /tmp/ge.json | tail -1
