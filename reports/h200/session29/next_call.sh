#!/usr/bin/env bash
# Prepared in session 29 for the next session's first device call (it has NOT run yet):
#  - #30 item 4: whether every point of the threads sweep is under 1.05 at its pooled median on
#    the lean tree (session 29's two sweeps read 19 of 20 points under it, the page cycle at 16
#    threads 0.987 and 1.063), and whether ab_allowance.patch (the released-handle allowance
#    cleared only when set, so that releases stop writing the engine's read-mostly line) moves
#    the page cycle at 8 and 16 threads. thread_scaling_bench --threads 1,2,4,8,16 --setup caller
#    --engine-hold --print-rounds (500 cycles, at least 10 rounds and 2 s a point), this tree
#    (base) and the patch (allowance) alternated, two sweeps each; rounds pooled per point and
#    per side by tools/pool_rounds.py, with the difference's interval.
#  - #32 item 1: runner_overhead_bench --backend cuda --cycles 1000 --rounds 96, three runs of
#    base, between the sweeps.
# If the patch lands, its tree needs the evidence script too (a call of its own).
# Outputs tarred into $OUT/next.tgz after every run (a call brings back 8 files at most).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out=/tmp/next
mkdir -p "$out" /tmp/base /tmp/allowance
keep() { tar czf "${OUT:-/tmp}/next.tgz" -C "$out" .; }
tools/h200_build.sh thread_scaling_bench runner_overhead_bench || exit 1
cp build-gpu/bench/thread_scaling_bench build-gpu/bench/runner_overhead_bench /tmp/base/
patch=reports/h200/session29/ab_allowance.patch
git apply "$patch" && cmake --build build-gpu --target thread_scaling_bench >/tmp/build_allowance.log 2>&1 &&
  cp build-gpu/bench/thread_scaling_bench /tmp/allowance/ ||
  { echo "A/B build failed"; tail -20 /tmp/build_allowance.log; exit 1; }
git apply -R "$patch"
echo "built at ${SECONDS}s"
overhead() {  # overhead N: runner_overhead_bench run N on this tree
  echo "== runner_overhead_bench, run $1 (at ${SECONDS}s)"
  timeout 70 /tmp/base/runner_overhead_bench --backend cuda --cycles 1000 --rounds 96 \
    >"$out/overhead_$1.txt" 2>&1
  grep -E "runner / driver|runner / engine|engine / driver" "$out/overhead_$1.txt"
  keep
}
for i in 1 2; do
  for v in base allowance; do
    echo "== sweep $v $i (at ${SECONDS}s)"
    timeout 120 /tmp/$v/thread_scaling_bench --threads 1,2,4,8,16 --cycles 500 --rounds 10 \
      --seconds 2 --setup caller --engine-hold --print-rounds >"$out/sweep_${v}_$i.txt" 2>&1
    grep -v '^round' "$out/sweep_${v}_$i.txt" | cut -c1-120
    keep
  done
  if [ "$i" = 1 ]; then overhead 1 && overhead 2; else overhead 3; fi
done
python3 tools/pool_rounds.py base="$out/sweep_base_*.txt" allowance="$out/sweep_allowance_*.txt" |
  tee "$out/pooled.txt"
keep
echo "done at ${SECONDS}s"
