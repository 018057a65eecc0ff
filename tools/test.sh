#!/usr/bin/env bash
# Builds (tools/build.sh) and runs the whole test suite with CTest. GPU tests (label `gpu`) run
# where a CUDA device exists and are reported as skipped, with the reason, where none does.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh "$@"
ctest --test-dir build --output-on-failure -j"$(nproc)"
