#!/bin/bash
# ThreadSanitizer run of what several threads touch: a host-backend build with -fsanitize=thread
# (build-tsan/), then the tests of threads groups, the shared engine, the twin's stream and the
# busy kernels, and the threaded scenarios through the binary. Exit status: the tests'.
#   tools/tsan.sh [extra ctest -R regex]
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")  # valijson, where it is not installed
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVMMRUN_CUDA=OFF "${prefix[@]}" \
  -DVMMRUN_TSAN=ON -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST >/dev/null
cmake --build build-tsan --target vmm_tests vmm-run
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tools/tsan.supp"
# TSan's shadow memory needs the classic address-space layout: kernels with high-entropy ASLR
# make an instrumented binary crash at start (seen on the H200 machine), so run without it.
norandom=()
command -v setarch >/dev/null && norandom=(setarch "$(uname -m)" -R)
"${norandom[@]}" build-tsan/vmm_tests --gtest_filter='*Thread*:SharedEngine*:HostBusy*:HostStream*'
for s in scenarios/unmap_from_another_thread.yaml scenarios/vmm_threads.yaml \
  scenarios/zero_page_remap_race.yaml scenarios/set_access_busy_stream.yaml \
  scenarios/map_without_context.yaml; do
  "${norandom[@]}" build-tsan/vmm-run "$s" --backend host --quiet --report-dir build-tsan/reports
done
echo "tsan: clean"
