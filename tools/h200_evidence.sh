#!/usr/bin/env bash
# The evidence run on a GPU machine (see ../shared/gpu.md and reports/h200/README.md): builds in
# build-gpu, runs every scenario (reports to $OUT/reports), diffs those against the host baselines
# (stable fields, as the cross_backend_agreement test does) and against the committed H200
# baselines (timings included), runs the whole CTest suite, compute-sanitizer memcheck with leak
# checking on every scenario, and the benchmarks. Logs go to $OUT/*.log. Needs $OUT set.
#   tools/h200_evidence.sh [extra cmake args...]
# Environment: SANITIZE="a b" limits memcheck to those scenario names (default: every scenario;
# "none" skips it); SANITIZE_SWEEPS=0 skips memcheck over the GPU fault and interruption sweeps
# (SWEEP_TIMEOUT seconds, default 300); OVERHEAD_RUNS (default 3) runner_overhead_bench runs;
# RUN_TESTS=0 skips CTest and the scenario runs, RUN_BENCH=0 the benchmarks (to split the evidence
# over several device calls); CTEST_REGEX limits CTest to the tests it matches, CTEST_SECONDS
# bounds its wall time (it runs after the scenarios); DATA_RUNS (default 10) data_plane_bench and
# peer_torch.py runs. A header-only dependency the machine lacks (valijson) travels in .deps (see
# ../shared/gpu.md) and is found there.
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to the directory for logs and reports}"
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/reports"
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  "${prefix[@]}" "$@" \
  >"$OUT/configure.log" 2>&1 && cmake --build build-gpu >"$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; exit 1; }
if [ "${RUN_TESTS:-1}" = 1 ]; then
{
  for s in scenarios/*.yaml; do
    if grep -q '^sweep:' "$s"; then  # one report per point, and the sweep's table (CSV)
      ./build-gpu/vmm-run "$s" --backend auto --report-dir "$OUT/reports"
    else
      ./build-gpu/vmm-run "$s" --backend auto --report "$OUT/reports/$(basename "$s" .yaml).json"
    fi
    echo "exit $? for $s"
  done
  ./build-gpu/vmm-run timeline "$OUT/reports/reuse.json" -o "$OUT/reports/reuse.timeline.html"
  echo "== diff against the host baselines (stable fields)"
  ./build-gpu/vmm-run diff reports/baselines/host "$OUT/reports" \
    --config reports/baselines/cross-machine.yaml --fail-on=regression,missing,ambiguous
  echo "exit $?"
  echo "== diff against the committed H200 baselines"
  ./build-gpu/vmm-run diff reports/baselines/h200 "$OUT/reports"
  echo "exit $?"
} >"$OUT/run.log" 2>&1
grep -E "^exit|summary|result" "$OUT/run.log" | tail -40
# The suite last, so that the scenario reports come back even when it is cut by CTEST_SECONDS.
timeout "${CTEST_SECONDS:-3600}" ctest --test-dir build-gpu --output-on-failure -j8 \
  ${CTEST_REGEX:+-R "$CTEST_REGEX"} >"$OUT/ctest.log" 2>&1
echo "ctest: exit $?, $(grep -E 'tests passed|tests failed' "$OUT/ctest.log")"
grep -E "^\s+[0-9]+ - .*(Failed|SEGFAULT|Timeout|Exception)" "$OUT/ctest.log" | head -20
fi
for s in scenarios/*.yaml; do
  name=$(basename "$s" .yaml)
  case " ${SANITIZE:-$name} " in *" $name "*) ;; *) continue ;; esac
  compute-sanitizer --tool memcheck --leak-check full ./build-gpu/vmm-run "$s" \
    --report "$OUT/sanitized.json" >"$OUT/sanitizer_$(basename "$s" .yaml).log" 2>&1
  echo "sanitizer $(basename "$s"): exit $?, $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer_$(basename "$s" .yaml).log")"
done | tee "$OUT/sanitizer.log"
# The leak check over the GPU fault-injection and interruption sweeps (every faulty or stopped
# run in one process), and a probe of what the leak check sees (tools/sanitizer_leak_probe.cc).
if [ "${SANITIZE_SWEEPS:-1}" = 1 ]; then
  timeout "${SWEEP_TIMEOUT:-300}" compute-sanitizer --tool memcheck --leak-check full \
    ./build-gpu/vmm_tests --gtest_filter='FaultInjection.OnTheGpu*' >"$OUT/sanitizer_sweeps.log" 2>&1
  echo "sanitizer sweeps: exit $?, $(grep -c 'Leaked' "$OUT/sanitizer_sweeps.log") leak lines," \
    "$(grep -E 'ERROR SUMMARY' "$OUT/sanitizer_sweeps.log" | tail -1)," \
    "$(grep -E '^(fault injection|interruptions|device memory)' "$OUT/sanitizer_sweeps.log" | tr '\n' ' ')"
  g++ -O1 tools/sanitizer_leak_probe.cc -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs \
    -lcuda -o build-gpu/sanitizer_leak_probe &&
    compute-sanitizer --tool memcheck --leak-check full ./build-gpu/sanitizer_leak_probe \
      >"$OUT/sanitizer_leak_probe.log" 2>&1
  echo "leak probe: $(grep -c 'Leaked' "$OUT/sanitizer_leak_probe.log") leak lines (control: 1)"
fi
[ "${RUN_BENCH:-1}" = 1 ] && timeout "${BENCH_TIMEOUT:-400}" bash -c '
  ./build-gpu/bench/cuda_overhead_bench --iters 300
  for ((i = 0; i < ${OVERHEAD_RUNS:-3}; i++)); do
    ./build-gpu/bench/runner_overhead_bench --backend cuda --cycles 1000 --rounds 48
  done
  ./build-gpu/bench/runner_overhead_bench --backend null --cycles 1000 --rounds 200
  ./build-gpu/bench/peer_bench  # two GPUs only; prints "skipped" on one
  # The 64 GiB sleep/wake cycle per call kind against the raw replay of its calls, alternated.
  ./build-gpu/bench/replay_bench scenarios/sleep_wake_64g.yaml --rounds 3
  ./build-gpu/bench/data_plane_bench --runs "${DATA_RUNS:-10}" --gib 4
  python3 bench/peer_torch.py --runs "${DATA_RUNS:-10}" --gib 4 || echo "peer_torch: exit $?"
' >"$OUT/bench.log" 2>&1
[ "${RUN_BENCH:-1}" = 1 ] &&
  grep -E "runner / driver|engine / driver|outside|executor alone|GB/s|skipped|ratio|torch" "$OUT/bench.log" | head -60
# The device tool brings back a limited number of files: one archive for the reports and logs.
(cd "$OUT" && tar -czf reports.tar.gz reports sanitizer_*.log 2>/dev/null; rm -rf reports sanitizer_*.log)
