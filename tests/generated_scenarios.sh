#!/bin/sh
# CTest `generated_scenarios` (issue: the host twin tells the GPU's truth): 500 fresh generated
# scenarios, some with isolate blocks, each validated, run twice on the host twin, both reports
# read back from their JSON and diffed (vmm-run crosscheck --reference host --model host). Any
# invalid scenario, internal error, crash or difference fails. The seed changes every run and is
# printed first: replay a failure with `vmm-run crosscheck --reference host --model host --seed S`
# (or one scenario with `vmm-run generate --seed N`).
#   generated_scenarios.sh VMMRUN OUTDIR [SEED]
set -eu
vmmrun=$1 out=$2
seed=${3:-$(date +%s)}
echo "seed $seed"
# A failing seed is also appended to OUTDIR.failed-seeds, so that it outlives the ctest log of a
# later run.
status=0
"$vmmrun" crosscheck --reference host --model host --count 500 --seed "$seed" \
  --isolate-percent 2 -q --out "$out" || status=$?
[ "$status" -eq 0 ] || echo "$seed" >>"$out.failed-seeds"
exit "$status"
