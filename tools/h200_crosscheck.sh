#!/usr/bin/env bash
# The twin-fidelity run on a GPU machine (docs/generator.md): builds vmm-run in build-gpu, runs
# tools/twin_fidelity_probe.cc (PROBE=0 skips it), then JOBS crosscheck processes at once (the
# host twin's half of the work is CPU-bound; the GPU's VMM calls serialise in the driver), job j
# taking seeds SEED + j * COUNT .. + COUNT - 1, each stopping at TIME_LIMIT seconds. Everything
# lands in $OUT: build and probe logs, and crosscheck.tgz (crosscheck-<j>.log, the disagreements
# in job-<j>/<name>/).
#   OUT=... JOBS=4 COUNT=5000 SEED=1 TIME_LIMIT=300 tools/h200_crosscheck.sh [crosscheck options]
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to the directory for logs}"
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
start=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  "${prefix[@]}" >"$OUT/configure.log" 2>&1 &&
  cmake --build build-gpu --target vmm-run >"$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/configure.log" "$OUT/build.log"; exit 1; }
echo "build: $(($(date +%s) - start)) s"
if [ "${PROBE:-1}" = 1 ]; then
  nvcc -O1 tools/twin_fidelity_probe.cc -lcuda -o build-gpu/twin_fidelity_probe &&
    timeout 120 ./build-gpu/twin_fidelity_probe >"$OUT/twin_fidelity_probe.log" 2>&1
  echo "probe: exit $? ($(wc -l <"$OUT/twin_fidelity_probe.log") lines)"
fi
jobs=${JOBS:-4} count=${COUNT:-5000} seed=${SEED:-1}
# Each job prints a line per scenario as it finishes (line-buffered), so a job that dies names the
# scenario it was running: the seed after its last line.
for ((j = 0; j < jobs; j++)); do
  (
    stdbuf -oL ./build-gpu/vmm-run crosscheck --seed $((seed + j * count)) --count "$count" \
      --time-limit "${TIME_LIMIT:-300}" --out "/tmp/crosscheck/job-$j" "$@" >"$OUT/crosscheck-$j.log" 2>&1
    echo $? >"$OUT/crosscheck-$j.exit"
  ) &
done
wait
for ((j = 0; j < jobs; j++)); do
  log=$OUT/crosscheck-$j.log rc=$(cat "$OUT/crosscheck-$j.exit")
  echo "== job $j: exit $rc, $(grep -c '^disagreement' "$log") disagreements saved"
  grep -E '^(summary|results|time|stopped)' "$log"
  if [ "$rc" -ge 128 ]; then
    last=$(grep -oE '^gen_[0-9]+' "$log" | tail -1)
    echo "   killed by signal $((rc - 128)) after ${last:-no scenario}: the scenario it was running is seed $(( ${last#gen_} + 1 ))"
  fi
done
echo "disagreement kinds:"
cat "$OUT"/crosscheck-*.log | grep -oE ': disagree \(.*\)$' | sort | uniq -c | sort -rn | head -30
# The device tool brings back only so many files: the logs and the disagreements in one archive.
mkdir -p /tmp/crosscheck && cp "$OUT"/crosscheck-*.log "$OUT"/*.exit /tmp/crosscheck/ 2>/dev/null
tar czf "$OUT/crosscheck.tgz" -C /tmp crosscheck && rm -f "$OUT"/crosscheck-*.log "$OUT"/*.exit
echo "total: $(($(date +%s) - start)) s"
