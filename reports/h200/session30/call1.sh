#!/usr/bin/env bash
# Session 30, device call 1: two A/Bs on a fresh machine.
#  - #32 item 1 (runner / driver <= 1.02): runner_overhead_bench --backend cuda --cycles 1000
#    --rounds 96, three runs of each of three binaries, alternated in a rotated order: this tree
#    (base); ab_endgame.patch (endgame: the recorder spins instead of sleeping once the burst's
#    pace says it ends within 400 us, and BackgroundThread::Wait spins up to 200 us before it
#    sleeps: on the CI VM the burst's end cost 80-170 us of wakes, now 10-20); endgame +
#    ab_prefetch.patch (both: the next compiled step's line prefetched before each call).
#  - #30 item 4: ../session29/ab_allowance.patch (the released-handle allowance cleared only when
#    set, so releases stop writing the engine's read-mostly line) against base, the page cycle at
#    8 and 16 threads (--mix cycle --setup caller --engine-hold --print-rounds), four runs each
#    alternated, rounds pooled by tools/pool_rounds.py.
# Outputs tarred into $OUT/call1.tgz after every run (a call brings back 8 files at most).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0
out=/tmp/call1
mkdir -p "$out" /tmp/base /tmp/endgame /tmp/both /tmp/allowance
keep() { tar czf "${OUT:-/tmp}/call1.tgz" -C "$out" .; }
here=reports/h200/session30
tools/h200_build.sh thread_scaling_bench runner_overhead_bench || exit 1
cp build-gpu/bench/thread_scaling_bench build-gpu/bench/runner_overhead_bench /tmp/base/
build() {  # build DIR TARGET PATCH...: this tree with the patches applied, TARGET copied to DIR
  local dir=$1 target=$2
  shift 2
  for p in "$@"; do git apply "$p" || { echo "$p does not apply"; exit 1; }; done
  cmake --build build-gpu --target "$target" >"/tmp/build_$dir.log" 2>&1 ||
    { echo "build of $dir failed"; tail -20 "/tmp/build_$dir.log"; exit 1; }
  cp "build-gpu/bench/$target" "/tmp/$dir/"
  for ((i = $#; i >= 1; i--)); do git apply -R "${!i}" || { echo "${!i} did not revert"; exit 1; }; done
}
build endgame runner_overhead_bench "$here/ab_endgame.patch"
build both runner_overhead_bench "$here/ab_endgame.patch" "$here/ab_prefetch.patch"
build allowance thread_scaling_bench reports/h200/session29/ab_allowance.patch
echo "built at ${SECONDS}s"
overhead() {  # overhead VARIANT RUN
  echo "== runner_overhead_bench $1, run $2 (at ${SECONDS}s)"
  timeout 70 "/tmp/$1/runner_overhead_bench" --backend cuda --cycles 1000 --rounds 96 \
    >"$out/overhead_$1_$2.txt" 2>&1
  grep -E "runner / driver|runner / engine|engine / driver|inside engine|outside" \
    "$out/overhead_$1_$2.txt"
  keep
}
overhead base 1 && overhead endgame 1 && overhead both 1
overhead endgame 2 && overhead both 2 && overhead base 2
overhead both 3 && overhead base 3 && overhead endgame 3
for i in 1 2 3 4; do
  order="base allowance"
  [ $((i % 2)) = 0 ] && order="allowance base"
  for v in $order; do
    echo "== cycle sweep $v $i (at ${SECONDS}s)"
    timeout 60 "/tmp/$v/thread_scaling_bench" --threads 8,16 --mix cycle --cycles 500 \
      --rounds 10 --seconds 2 --setup caller --engine-hold --print-rounds \
      >"$out/threads_${v}_$i.txt" 2>&1
    grep -v '^round' "$out/threads_${v}_$i.txt" | cut -c1-120
    keep
  done
done
python3 tools/pool_rounds.py base="$out/threads_base_*.txt" \
  allowance="$out/threads_allowance_*.txt" | tee "$out/pooled.txt"
keep
echo "done at ${SECONDS}s"
