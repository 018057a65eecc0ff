#!/usr/bin/env bash
# Builds the libFuzzer targets in build-fuzz/ (clang, ASan + UBSan, CUDA off) and runs each one for
# a fixed number of executions from the committed seeds (see fuzz/CMakeLists.txt).
#   tools/fuzz.sh [RUNS] [TARGET...]     RUNS defaults to 1000000; TARGETs to scenario report
# Output: build-fuzz/fuzz-<target>-<RUNS>.log; a crash leaves build-fuzz/crash-<target>-* and exits 1.
# Environment: JOBS (ninja -j, default 2), FUZZ_JOBS (libFuzzer -jobs, default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(scenario report)

cmake -S . -B build-fuzz -G Ninja -DVMMRUN_FUZZ=ON -DVMMRUN_CUDA=OFF \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build-fuzz -j"${JOBS:-2}" "${targets[@]/#/fuzz_}"

status=0
for t in "${targets[@]}"; do
  case "$t" in
    scenario) seeds=(scenarios tests/bad_inputs tests/data); max_len=65536 ;;
    report) seeds=(reports); max_len=262144 ;;
    *) echo "unknown target '$t' (expected scenario or report)" >&2; exit 2 ;;
  esac
  mkdir -p "build-fuzz/corpus/$t"
  log="build-fuzz/fuzz-$t-$runs.log"
  echo "fuzz_$t: $runs executions (log: $log)"
  if ! "build-fuzz/fuzz/fuzz_$t" -runs="$runs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
       -dict="build-fuzz/fuzz/$t.dict" -artifact_prefix="build-fuzz/crash-$t-" \
       -print_final_stats=1 "build-fuzz/corpus/$t" "${seeds[@]}" >"$log" 2>&1; then
    echo "fuzz_$t: FAILED, see $log" >&2
    status=1
  fi
  grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$log" | tail -2
done
exit $status
