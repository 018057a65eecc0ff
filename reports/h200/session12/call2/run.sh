#!/bin/bash
# Session 12 probe: build, GPU busy tests, the race scenarios 5 times each on the H200.
set -u
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$PWD/.deps/usr" > $OUT/configure.log 2>&1
time ninja -C build-gpu vmm-run vmm_gpu_tests > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
build-gpu/runner/engine/cuda/vmm_gpu_tests --gtest_filter='*Busy*' 2>&1 | tail -15
mkdir -p $OUT/r
for s in scenarios/unmap_under_reader.yaml scenarios/zero_page_remap_race.yaml scenarios/set_access_busy_stream.yaml scenarios/unmap_race.yaml probe/remap_full.yaml; do
  n=$(basename $s .yaml)
  for i in 1 2 3 4 5; do
    build-gpu/vmm-run $s --report $OUT/r/$n.$i.json > $OUT/r/$n.$i.log 2>&1; echo "$n run $i exit $?"
  done
  grep -hE "^ +[0-9]+ .*child|fault:|FAILED|result:" $OUT/r/$n.1.log
done
tar czf $OUT/probe.tgz -C $OUT r && rm -rf $OUT/r
