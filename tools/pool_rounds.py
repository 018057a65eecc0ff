"""Pools the rounds that `thread_scaling_bench --print-rounds` printed over many short runs of
several binaries (an A/B), so that an effect of about 1 % can be told from the runs' noise:
  python3 tools/pool_rounds.py base='out/threads_base_*.txt' pack='out/threads_pack_*.txt' ...
For each variant and each (mix, threads) point: the rounds pooled, the median of runner / raw,
engine / raw and raw / raw with a 95 % bootstrap interval of the median; then, for each variant
after the first, its runner / raw median minus the first's, with a 95 % bootstrap interval of
that difference (an interval that holds 0 is no effect the rounds can resolve). The bootstrap
resamples runs (files) first and then rounds within each: a run's rounds share that run's state
(the machine, the process), so they are not independent, and an interval taken over rounds alone
would be too narrow. Each label and each file may be named once. Deterministic (a fixed seed);
prints figures only."""
import glob
import random
import statistics
import sys

COLUMNS = ("runner/raw", "engine/raw", "raw/raw")
RESAMPLES = 2000


def rounds_of(paths):
    """{(mix, threads): [[(runner/raw, engine/raw, raw/raw), ...] per file]} from `paths`."""
    points = {}
    for path in paths:
        per_point = {}
        with open(path) as f:
            for line in f:
                fields = line.split()
                if len(fields) != 6 or fields[0] != "round":
                    continue
                per_point.setdefault((fields[1], int(fields[2])), []).append(
                    tuple(float(x) for x in fields[3:]))
        for point, rows in per_point.items():
            points.setdefault(point, []).append(rows)
    return points


def resample(runs, rng):
    """Runs drawn with replacement, then rounds within each drawn run: one pooled resample."""
    pooled = []
    for run in (rng.choice(runs) for _ in runs):
        pooled.extend(rng.choice(run) for _ in run)
    return pooled


def percentiles(values):
    """The 2.5th and 97.5th percentiles of `values` (RESAMPLES of them)."""
    values = sorted(values)
    return values[int(0.025 * len(values))], values[int(0.975 * len(values)) - 1]


def median_interval(runs, rng):
    return percentiles([statistics.median(resample(runs, rng)) for _ in range(RESAMPLES)])


def difference_interval(base, other, rng):
    return percentiles([statistics.median(resample(other, rng)) -
                        statistics.median(resample(base, rng)) for _ in range(RESAMPLES)])


def column(runs, k):
    """Column k of every round, kept by run."""
    return [[row[k] for row in run] for run in runs]


def pooled(runs):
    return [x for run in runs for x in run]


def main(argv):
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        print(__doc__, file=sys.stderr)
        return 2
    variants = [tuple(a.split("=", 1)) for a in argv[1:]]
    labels = [label for label, _ in variants]
    if len(set(labels)) != len(labels):
        print("error: a label is named twice; give each variant its own", file=sys.stderr)
        return 2
    files = {label: sorted(glob.glob(pattern)) for label, pattern in variants}
    seen = {}
    for label, paths in files.items():
        for path in paths:
            if path in seen:
                print(f"error: '{path}' matches both '{seen[path]}' and '{label}': make the "
                      "patterns name disjoint files", file=sys.stderr)
                return 2
            seen[path] = label
    data = {label: rounds_of(files[label]) for label in labels}
    for label, pattern in variants:
        if not data[label]:
            print(f"error: no 'round' lines in the files '{pattern}' names (run the bench with "
                  "--print-rounds)", file=sys.stderr)
            return 1
    rng = random.Random(29)
    points = sorted({p for d in data.values() for p in d})
    for mix, threads in points:
        print(f"{mix} at {threads} threads")
        for label in labels:
            runs = data[label].get((mix, threads), [])
            if not runs:
                print(f"  {label:10s} no rounds")
                continue
            text = []
            for k, name in enumerate(COLUMNS):
                by_run = column(runs, k)
                low, high = median_interval(by_run, rng)
                text.append(f"{name} {statistics.median(pooled(by_run)):.4f} "
                            f"[{low:.4f}, {high:.4f}]")
            print(f"  {label:10s} {len(pooled(runs)):4d} rounds in {len(runs):2d} runs  " +
                  "  ".join(text))
        base = column(data[labels[0]].get((mix, threads), []), 0)
        for label in labels[1:]:
            other = column(data[label].get((mix, threads), []), 0)
            if not base or not other:
                continue
            low, high = difference_interval(base, other, rng)
            shift = statistics.median(pooled(other)) - statistics.median(pooled(base))
            print(f"  {label} - {labels[0]}, runner/raw: {shift:+.4f} [{low:+.4f}, {high:+.4f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
