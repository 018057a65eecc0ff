#!/usr/bin/env bash
# Session 25, device call 1: this session's runner (ab.patch: a long burst's later steps compiled
# on the background thread ahead of the calls, the recorder polling every 200 µs instead of being
# woken every 128 steps) against the tree before it (ec568f3, ab.patch reversed), one build
# directory:
#   1. session 24's unrun call 5, on the new tree: sleep_wake_64g and pages_1gib with --quiet (their
#      long bursts helped by the background thread) against their H200 baselines;
#   2. runner_overhead_bench --backend cuda --cycles 1000 --rounds 48, alternated, three runs each;
#      --backend spin (every VMM call a 10 µs spin: the runner's own work, no driver), one each;
#   3. thread_scaling_bench --threads 4 --cycles 300 --rounds 20 --seconds 3, new tree, two runs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
here=reports/h200/session25
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
benches=(--target runner_overhead_bench --target thread_scaling_bench)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DVMMRUN_WERROR=ON "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu --target vmm-run "${benches[@]}" >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
out="${OUT:-/tmp}"
mkdir -p "$out/reports" /tmp/new /tmp/old
cp build-gpu/bench/{runner_overhead,thread_scaling}_bench /tmp/new/
for s in sleep_wake_64g pages_1gib; do
  ./build-gpu/vmm-run "scenarios/$s.yaml" --backend cuda --quiet --report "$out/reports/$s.json"
  echo "exit $? for $s"
  ./build-gpu/vmm-run diff "reports/baselines/h200/$s.json" "$out/reports/$s.json" | tail -1
done 2>&1 | tee "$out/quiet_diffs.txt"
git apply -R "$here/ab.patch" && cmake --build build-gpu "${benches[@]}" >/tmp/build_old.log 2>&1 &&
  cp build-gpu/bench/{runner_overhead,thread_scaling}_bench /tmp/old/ && git apply "$here/ab.patch" ||
  { echo "A/B build failed"; tail -20 /tmp/build_old.log; exit 1; }
for i in 1 2 3; do
  for t in old new; do
    echo "== runner_overhead_bench --backend cuda, $t, run $i"
    timeout 100 /tmp/$t/runner_overhead_bench --backend cuda --cycles 1000 --rounds 48
  done
done >"$out/overhead_ab.txt" 2>&1
for t in old new; do
  echo "== runner_overhead_bench --backend spin, $t"
  timeout 100 /tmp/$t/runner_overhead_bench --backend spin --cycles 1000 --rounds 24
done >>"$out/overhead_ab.txt" 2>&1
grep -E "^==|per step|runner / driver|engine / driver|driver / driver|runner / engine|CPU time|inside engine|outside|records aside|compiled" \
  "$out/overhead_ab.txt"
for i in 1 2; do
  echo "== thread_scaling_bench new, run $i"
  timeout 60 /tmp/new/thread_scaling_bench --threads 4 --cycles 300 --rounds 20 --seconds 3
done >"$out/threads.txt" 2>&1
cut -c1-100 "$out/threads.txt"
