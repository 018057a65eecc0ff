#!/usr/bin/env bash
# The twin-fidelity run on a GPU machine (docs/generator.md): builds vmm-run in build-gpu, runs
# tools/twin_fidelity_probe.cc (PROBE=0 skips it), then JOBS crosscheck processes at once (the
# host twin's half of the work is CPU-bound; the GPU's VMM calls serialise in the driver), job j
# taking seeds SEED + j * COUNT .. + COUNT - 1, each stopping at TIME_LIMIT seconds. Everything
# lands in $OUT: build and probe logs, crosscheck-<j>.log, disagreements.tgz (job-<j>/<name>/).
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
for ((j = 0; j < jobs; j++)); do
  ./build-gpu/vmm-run crosscheck -q --seed $((seed + j * count)) --count "$count" \
    --time-limit "${TIME_LIMIT:-300}" --out "/tmp/crosscheck/job-$j" "$@" >"$OUT/crosscheck-$j.log" 2>&1 &
done
wait
# The disagreements, packed: a device call brings back only so many files.
[ -d /tmp/crosscheck ] && tar czf "$OUT/disagreements.tgz" -C /tmp crosscheck
for ((j = 0; j < jobs; j++)); do
  echo "== job $j: $(grep -c '^disagreement' "$OUT/crosscheck-$j.log") disagreements"
  grep -E '^(summary|results|time|stopped)' "$OUT/crosscheck-$j.log"
done
echo "disagreement kinds:"
cat "$OUT"/crosscheck-*.log | grep -oE ': disagree \(.*\)$' | sort | uniq -c | sort -rn | head -30
echo "total: $(($(date +%s) - start)) s"
