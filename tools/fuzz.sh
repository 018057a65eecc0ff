#!/usr/bin/env bash
# Builds the libFuzzer targets in build-fuzz/ (clang, ASan + UBSan, CUDA off) and runs each one for
# a fixed number of executions from the committed seeds (see fuzz/CMakeLists.txt).
#   tools/fuzz.sh [RUNS] [TARGET...]     RUNS defaults to 1000000; TARGETs to scenario report
#                                        snapshot trace
# Output: build-fuzz/fuzz-<target>-<RUNS>[.<job>].log; a crash leaves build-fuzz/crash-<target>-*
# and exits 1. The total of executions per target is printed at the end.
# Environment:
#   JOBS       ninja -j for the build (default 2)
#   FUZZ_JOBS  fuzzer processes per target (default 1): RUNS is split between them, each with its
#              own seed, all sharing the target's corpus directory
#   FUZZ_BIN   a directory holding fuzz_<target> and <target>.dict built earlier (e.g. carried to
#              another machine): no build
#   FUZZ_SECONDS  stop each process after this many seconds even if RUNS is not reached
#              (libFuzzer's -max_total_time); the total actually executed is printed
#   FUZZ_MAX_LEN  the longest input libFuzzer makes (default 65536 scenario, 262144 report); a
#              smaller one runs several times faster (4096: ~1,700 executions/s per process here)
#   FUZZ_FLAGS more libFuzzer flags for every process, e.g. "-reload=60": with many processes
#              sharing one corpus, the default re-reads it every second in each of them
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(scenario report snapshot trace)
jobs=${FUZZ_JOBS:-1}

bin=${FUZZ_BIN:-build-fuzz/fuzz}
if [ -z "${FUZZ_BIN:-}" ]; then
  cmake -S . -B build-fuzz -G Ninja -DVMMRUN_FUZZ=ON -DVMMRUN_CUDA=OFF \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  ninja -C build-fuzz -j"${JOBS:-2}" "${targets[@]/#/fuzz_}"
fi
mkdir -p build-fuzz

status=0
for t in "${targets[@]}"; do
  case "$t" in
    scenario) seeds=(scenarios tests/bad_inputs tests/data); max_len=${FUZZ_MAX_LEN:-65536} ;;
    report) seeds=(reports); max_len=${FUZZ_MAX_LEN:-262144} ;;
    snapshot) seeds=(tests/fixtures/torch_snapshots); max_len=${FUZZ_MAX_LEN:-65536} ;;
    trace) seeds=(tests/fixtures/traces); max_len=${FUZZ_MAX_LEN:-65536} ;;
    *) echo "unknown target '$t' (expected scenario, report, snapshot or trace)" >&2; exit 2 ;;
  esac
  mkdir -p "build-fuzz/corpus/$t"
  per_job=$(((runs + jobs - 1) / jobs))
  echo "fuzz_$t: $runs executions in $jobs process(es) (logs: build-fuzz/fuzz-$t-$runs*.log)"
  rm -f build-fuzz/fuzz-"$t"-"$runs"*.log
  pids=()
  for ((j = 0; j < jobs; j++)); do
    log="build-fuzz/fuzz-$t-$runs.log"
    [ "$jobs" -gt 1 ] && log="build-fuzz/fuzz-$t-$runs.$j.log"
    "$bin/fuzz_$t" -runs="$per_job" ${FUZZ_SECONDS:+-max_total_time="$FUZZ_SECONDS"} \
      -seed=$((j + 1)) -max_len="$max_len" -timeout=10 \
      -rss_limit_mb=2048 $([ -f "$bin/$t.dict" ] && echo "-dict=$bin/$t.dict")$([ -f "fuzz/$t.dict" ] && echo " -dict=fuzz/$t.dict") \
      -artifact_prefix="build-fuzz/crash-$t-" \
      -print_final_stats=1 ${FUZZ_FLAGS:-} "build-fuzz/corpus/$t" "${seeds[@]}" >"$log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do
    if ! wait "$p"; then
      echo "fuzz_$t: a process FAILED, see build-fuzz/fuzz-$t-$runs*.log" >&2
      status=1
    fi
  done
  total=$(cat build-fuzz/fuzz-"$t"-"$runs"*.log | awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}')
  echo "fuzz_$t: $total executions in all"
done
exit $status
