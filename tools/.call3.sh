set -u
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$PWD/build-fuzz-bin:${LD_LIBRARY_PATH:-}
mkdir -p build-fuzz
# fuzz in the background, low priority: 6 processes per target, stopped by time
( for t in scenario report; do
    case $t in scenario) seeds="scenarios tests/bad_inputs tests/data"; ml=65536;; report) seeds=reports; ml=262144;; esac
    mkdir -p build-fuzz/corpus/$t
    for j in 0 1 2 3 4 5; do
      nice -n 19 build-fuzz-bin/fuzz_$t -max_total_time=${FUZZ_SECONDS:-480} -seed=$((j+1)) -max_len=$ml -timeout=10 -rss_limit_mb=2048 \
        -dict=build-fuzz-bin/$t.dict -artifact_prefix=build-fuzz/crash-$t- -print_final_stats=1 build-fuzz/corpus/$t $seeds > $OUT/fuzz-$t.$j.log 2>&1 &
    done
  done; wait ) &
FUZZ=$!
OUT=$OUT RUN_BENCH=0 SANITIZE=none SANITIZE_SWEEPS=0 CTEST_REGEX='CudaMatmulCheckTest' timeout 420 tools/h200_evidence.sh > $OUT/evidence.out 2>&1
grep -E "ctest|Failed|regression|^exit [^0]" $OUT/evidence.out | head -20
mkdir -p $OUT/r; for s in memory_accounting remap_replay_stress; do ./build-gpu/vmm-run scenarios/$s.yaml --backend cuda --report $OUT/r/$s.json -q | head -2; done
wait $FUZZ
for t in scenario report; do echo "$t: $(cat $OUT/fuzz-$t.*.log | awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}') executions; $(grep -l -E 'ERROR: libFuzzer|AddressSanitizer|runtime error' $OUT/fuzz-$t.*.log | wc -l) logs with an error"; done
ls build-fuzz/crash-* 2>/dev/null | head
tail -3 $OUT/fuzz-scenario.0.log
