#!/usr/bin/env python3
"""Summarises a `gemmsim-bench --once --cta-trace FILE` record: how far a launch's blocks drift
apart in time, wave by wave.

    cta_trace_summary.py validate/data/h100/cta_trace_s19.csv.gz [--row N]

Per traced row: the blocks' durations (median, p10, p90); per group of one wave of blocks in
launch order (as many blocks as SMs that ran them), the median duration and the spread of the
group's start times in median durations. Blocks that start a wave together and stay in step
keep that spread near 0; a spread of 1 means one block of the wave starts when another ends,
so at any moment the blocks in flight are spread over the whole K loop.
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
    print("  per wave, start spread / median duration: " +
          " ".join(f"{(max(start[g:g + wave]) - min(start[g:g + wave])) / med:.2f}"
                   for g in groups))


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
