"""Pools the rounds that `thread_scaling_bench --print-rounds` printed over many short runs of
several binaries (an A/B), so that an effect of about 1 % can be told from the runs' noise:
  python3 tools/pool_rounds.py base='out/threads_base_*.txt' pack='out/threads_pack_*.txt' ...
For each variant and each (mix, threads) point: the rounds pooled, the median of runner / raw,
engine / raw and raw / raw with a 95 % bootstrap interval of the median; then, for each variant
after the first, its runner / raw median minus the first's, with a 95 % bootstrap interval of
that difference (an interval that holds 0 is no effect the rounds can resolve). Deterministic
(a fixed seed); prints figures only."""
import glob
import random
import statistics
import sys

COLUMNS = ("runner/raw", "engine/raw", "raw/raw")
RESAMPLES = 2000


def rounds_of(pattern):
    """{(mix, threads): [(runner/raw, engine/raw, raw/raw), ...]} from the files `pattern` names."""
    points = {}
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            for line in f:
                fields = line.split()
                if len(fields) != 6 or fields[0] != "round":
                    continue
                points.setdefault((fields[1], int(fields[2])), []).append(
                    tuple(float(x) for x in fields[3:]))
    return points


def resample(values, rng):
    return [rng.choice(values) for _ in values]


def percentiles(values):
    """The 2.5th and 97.5th percentiles of `values` (RESAMPLES of them)."""
    values = sorted(values)
    return values[int(0.025 * len(values))], values[int(0.975 * len(values)) - 1]


def median_interval(values, rng):
    return percentiles([statistics.median(resample(values, rng)) for _ in range(RESAMPLES)])


def difference_interval(base, other, rng):
    return percentiles([statistics.median(resample(other, rng)) -
                        statistics.median(resample(base, rng)) for _ in range(RESAMPLES)])


def main(argv):
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        print(__doc__, file=sys.stderr)
        return 2
    variants = [tuple(a.split("=", 1)) for a in argv[1:]]
    data = {label: rounds_of(pattern) for label, pattern in variants}
    for label, pattern in variants:
        if not data[label]:
            print(f"error: no 'round' lines in the files '{pattern}' names (run the bench with "
                  "--print-rounds)", file=sys.stderr)
            return 1
    rng = random.Random(29)
    points = sorted({p for d in data.values() for p in d})
    for mix, threads in points:
        print(f"{mix} at {threads} threads")
        base_label = variants[0][0]
        for label, _ in variants:
            rows = data[label].get((mix, threads), [])
            if not rows:
                print(f"  {label:10s} no rounds")
                continue
            text = []
            for k, name in enumerate(COLUMNS):
                column = [r[k] for r in rows]
                low, high = median_interval(column, rng)
                text.append(f"{name} {statistics.median(column):.4f} [{low:.4f}, {high:.4f}]")
            print(f"  {label:10s} {len(rows):4d} rounds  " + "  ".join(text))
        base = [r[0] for r in data[base_label].get((mix, threads), [])]
        for label, _ in variants[1:]:
            other = [r[0] for r in data[label].get((mix, threads), [])]
            if not base or not other:
                continue
            low, high = difference_interval(base, other, rng)
            shift = statistics.median(other) - statistics.median(base)
            print(f"  {label} - {base_label}, runner/raw: {shift:+.4f} "
                  f"[{low:+.4f}, {high:+.4f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
