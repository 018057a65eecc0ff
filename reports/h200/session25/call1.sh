#!/usr/bin/env bash
# Session 25, device call 1: where the runner's last 2 % over the driver goes, on the H200's host.
#   1. session 24's unrun call 5: sleep_wake_64g and pages_1gib with --quiet (their long bursts'
#      records built on the background thread) against their H200 baselines;
#   2. runner_overhead_bench --backend cuda (48 rounds) and --backend spin (every VMM call a 10 µs
#      spin: the runner's own work on the run's thread, no driver), two runs each;
#   3. the same with phases.patch (RunPlan's time split: setup, scan, resize, compile, calls,
#      finish), one run each;
#   4. thread_scaling_bench --threads 4 --cycles 300 --rounds 20 --seconds 3, two runs (#30 item 4).
set -uo pipefail
cd "$(dirname "$0")/../../.."
here=reports/h200/session25
rm -rf build-gpu
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")
targets=(--target vmm-run --target runner_overhead_bench --target thread_scaling_bench)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DVMMRUN_WERROR=ON "${prefix[@]}" >/tmp/configure.log 2>&1 &&
  cmake --build build-gpu "${targets[@]}" >/tmp/build.log 2>&1 ||
  { tail -30 /tmp/configure.log /tmp/build.log; exit 1; }
out="${OUT:-/tmp}"
mkdir -p "$out/reports" /tmp/plain /tmp/phases
cp build-gpu/bench/runner_overhead_bench /tmp/plain/
for s in sleep_wake_64g pages_1gib; do
  ./build-gpu/vmm-run "scenarios/$s.yaml" --backend cuda --quiet --report "$out/reports/$s.json"
  echo "exit $? for $s"
  ./build-gpu/vmm-run diff "reports/baselines/h200/$s.json" "$out/reports/$s.json" | tail -1
done 2>&1 | tee "$out/quiet_diffs.txt"
git apply "$here/phases.patch" &&
  cmake --build build-gpu --target runner_overhead_bench >/tmp/build_phases.log 2>&1 &&
  cp build-gpu/bench/runner_overhead_bench /tmp/phases/ && git apply -R "$here/phases.patch" ||
  { echo "phases build failed"; tail -20 /tmp/build_phases.log; }
for i in 1 2; do
  for b in cuda spin; do
    echo "== runner_overhead_bench --backend $b, run $i"
    timeout 100 /tmp/plain/runner_overhead_bench --backend $b --cycles 1000 --rounds 48
  done
done >"$out/overhead.txt" 2>&1
for b in cuda spin; do
  echo "== runner_overhead_bench --backend $b with phases.patch"
  timeout 100 /tmp/phases/runner_overhead_bench --backend $b --cycles 1000 --rounds 48
done >>"$out/overhead.txt" 2>&1
grep -E "^==|per step|runner / driver|engine / driver|driver / driver|runner / engine|inside engine|outside|phases" \
  "$out/overhead.txt"
for i in 1 2; do
  echo "== thread_scaling_bench, run $i"
  timeout 60 ./build-gpu/bench/thread_scaling_bench --threads 4 --cycles 300 --rounds 20 --seconds 3
done >"$out/threads.txt" 2>&1
cut -c1-100 "$out/threads.txt"
