#!/bin/bash
# ThreadSanitizer run of what several threads touch (CI runs it after the suite, .ci/run): a
# host-backend build with -fsanitize=thread (build-tsan/, at -O1: it is built for its checks, on
# CI's two cores), then the tests of threads groups, the shared engine, the twin's stream and busy
# kernels, a burst's records built on the background thread (vmm_thread_tests), and the threaded
# scenarios through the binary. Exit status: the
# tests'; any report of a race stops the run (halt_on_error).
#   tools/tsan.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")  # valijson, where it is not installed
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" -DVMMRUN_CUDA=OFF "${prefix[@]}" \
  -DVMMRUN_TSAN=ON >/dev/null
cmake --build build-tsan -j"$(nproc)" --target vmm_thread_tests vmm-run
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tools/tsan.supp"
# TSan's shadow memory needs the classic address-space layout: kernels with high-entropy ASLR
# make an instrumented binary crash at start (seen on the H200 machine), so run without it.
norandom=()
command -v setarch >/dev/null && norandom=(setarch "$(uname -m)" -R)
"${norandom[@]}" build-tsan/vmm_thread_tests
for s in scenarios/unmap_from_another_thread.yaml scenarios/vmm_threads.yaml \
  scenarios/zero_page_remap_race.yaml scenarios/set_access_busy_stream.yaml \
  scenarios/map_without_context.yaml; do
  "${norandom[@]}" build-tsan/vmm-run "$s" --backend host --quiet --report-dir build-tsan/reports
done
echo "tsan: clean"
