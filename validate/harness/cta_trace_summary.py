#!/usr/bin/env python3
"""Summarises a `gemmsim-bench --once --cta-trace FILE` record: how far a launch's blocks drift
apart in time, wave by wave.

    cta_trace_summary.py validate/data/h100/cta_trace_s19.csv.gz [--row N]

Per traced row: the blocks' durations (median, p10, p90); per group of one wave of blocks in
launch order (as many blocks as SMs that ran them), the median duration and the spread of the
group's start times in median durations, and its blocks' start lags (p10 and p90 about the
median start). Blocks that start a wave together and stay in step
keep that spread near 0; a spread of 1 means one block of the wave starts when another ends,
so at any moment the blocks in flight are spread over the whole K loop.

Where more than one block fits an SM, the blocks that start together at the launch share their
SMs: the first wave's median duration per dispatch round (blocks 0..S-1 are round 1, the
next S round 2, ..., S the SMs used) shows whether co-resident blocks progress together (equal
durations) or the earlier dispatched ones first (durations growing with the round).

Two more lines tell drift that feeds itself from drift that corrects itself: per wave, the
correlation of a block's lag (its start less the wave's median start) with its duration
(positive: late blocks run longer and fall further behind; negative: they catch up), and the
correlation of the durations of consecutive blocks on one SM (near 1: some SMs are slower
than others throughout, as when each SM gets its own share of a saturated L2), with the spread
of the SMs' mean durations.

Where the record has a `cycles` column (each block's SM clock64 span; gemmsim-bench since
session 28, and gemmsim --cta-trace), a last line gives the SMs' clocks (their blocks' cycles
over nanoseconds): the GPCs run at clocks a few percent apart under the power limit.
"""
import argparse
import collections
import csv
import gzip
import statistics
import sys


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        rows = collections.defaultdict(list)
        for r in csv.DictReader(f):
            rows[int(r["row"])].append(r)
    return rows


def correlation(x, y):
    try:
        return statistics.correlation(x, y)
    except statistics.StatisticsError:  # fewer than two points, or one side constant
        return float("nan")


def summarise(blocks):
    blocks = sorted(blocks, key=lambda r: int(r["order"]))
    start = [int(r["start_ns"]) for r in blocks]
    dur = [int(r["end_ns"]) - s for r, s in zip(blocks, start) if int(r["end_ns"]) > 0]
    wave = len({r["smid"] for r in blocks})
    med = statistics.median(dur)
    dec = statistics.quantiles(dur, n=10) if len(dur) > 1 else [med] * 9
    groups = range(0, len(start) - wave + 1, wave)
    r0 = blocks[0]
    print(f"row {r0['row']} {r0['kernel']} {r0['m']}x{r0['n']}x{r0['k']}: {len(blocks)} blocks "
          f"on {wave} SMs, {max(int(r['end_ns']) for r in blocks) / 1e3:.1f} us")
    print(f"  block duration us: median {med / 1e3:.1f}, p10 {dec[0] / 1e3:.1f}, "
          f"p90 {dec[-1] / 1e3:.1f}")
    print("  per wave, median duration us: " +
          " ".join(f"{statistics.median(dur[g:g + wave]) / 1e3:.0f}" for g in groups))
    first = min(start)
    rounds = collections.defaultdict(list)
    for r, s, d in zip(blocks, start, dur):
        if s - first < 2000:  # started with the launch (within 2 us)
            rounds[int(r["order"]) // wave].append(d)
    if len(rounds) > 1:
        print("  first wave, median duration us by dispatch round: " +
              " ".join(f"{statistics.median(rounds[i]) / 1e3:.1f}" for i in sorted(rounds)))
    print("  per wave, start spread / median duration: " +
          " ".join(f"{(max(start[g:g + wave]) - min(start[g:g + wave])) / med:.2f}"
                   for g in groups))
    # The spread alone does not tell a few blocks a whole duration behind (in step with the
    # next wave, which costs an operand shared between consecutive tile rows little) from a
    # wave whose blocks are spread over the K loop (which costs the L2 its reuse).
    def lag_deciles(g):
        mid = statistics.median(start[g:g + wave])
        return statistics.quantiles([(s - mid) / med for s in start[g:g + wave]], n=10)
    print("  per wave, start lag p10/p90 in median durations: " +
          " ".join(f"{d[0]:+.2f}/{d[-1]:+.2f}" for d in map(lag_deciles, groups)))
    done = [(int(r["start_ns"]), int(r["end_ns"]) - int(r["start_ns"]), r["smid"])
            for r in blocks if int(r["end_ns"]) > 0]
    lags = []
    for g in groups:
        wave_blocks = done[g:g + wave]
        mid = statistics.median(s for s, _, _ in wave_blocks)
        lags.append(correlation([s - mid for s, _, _ in wave_blocks],
                                [d for _, d, _ in wave_blocks]))
    print("  per wave, correlation of start lag with duration: " +
          " ".join(f"{c:.2f}" for c in lags))
    per_sm = collections.defaultdict(list)
    for s, d, sm in sorted(done):
        per_sm[sm].append(d)
    pairs = [(a, b) for ds in per_sm.values() for a, b in zip(ds, ds[1:])]
    means = sorted(statistics.mean(ds) for ds in per_sm.values())
    sm_dec = statistics.quantiles(means, n=10) if len(means) > 1 else [means[0]] * 9
    print(f"  same SM, consecutive block durations: r = "
          f"{correlation([a for a, _ in pairs], [b for _, b in pairs]):.2f}; per-SM mean "
          f"duration us p10 {sm_dec[0] / 1e3:.1f}, p90 {sm_dec[-1] / 1e3:.1f}")
    if blocks and "cycles" in blocks[0]:
        span = collections.defaultdict(lambda: [0, 0])
        for r in blocks:
            ns = int(r["end_ns"]) - int(r["start_ns"])
            if int(r["end_ns"]) > 0 and ns > 0:
                span[r["smid"]][0] += int(r["cycles"])
                span[r["smid"]][1] += ns
        mhz = sorted(c / ns * 1e3 for c, ns in span.values() if ns > 0)
        if len(mhz) > 1:
            dec = statistics.quantiles(mhz, n=10)
            print(f"  SM clocks (cycles / ns) MHz: min {mhz[0]:.1f}, p10 {dec[0]:.1f}, median "
                  f"{statistics.median(mhz):.1f}, p90 {dec[-1]:.1f}, max {mhz[-1]:.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", help="CSV (or .csv.gz) written by gemmsim-bench --cta-trace")
    ap.add_argument("--row", type=int, action="append", help="sweep row(s) to show (default all)")
    a = ap.parse_args()
    try:
        rows = read(a.trace)
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"cta_trace_summary: {a.trace}: {e}")
    for row in a.row or sorted(rows):
        if row not in rows:
            sys.exit(f"cta_trace_summary: row {row} is not in {a.trace}")
        summarise(rows[row])


if __name__ == "__main__":
    main()
