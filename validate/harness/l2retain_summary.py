#!/usr/bin/env python3
"""Per point of `gemmsim-microbench --only l2retain` run under Nsight Compute, the DRAM bytes
each launch read over the stream's 256 MiB and the L2 sector hit rate (medians over the
point's launches).

    l2retain_summary.py ncu_l2retain.csv microbench_l2retain_ncu_run.csv

The first file is `ncu --csv --page raw --print-units base --kernel-name retain_kernel`'s log,
the second the microbenchmark's own CSV of the same process, whose l2_retain_* rows name the
points in the order the program launched them. A ratio of 1 means every follower found the
chunk in L2, the number of groups that none did; `gemmsim_tests "[.calibrate][l2retain]"`
prints the same figure for the model's memory system.
"""
import csv
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ncu_to_counters import read_ncu  # noqa: E402

STREAM_BYTES = 256 * 2**20


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: l2retain_summary.py NCU_LOG.csv MICROBENCH.csv")
    header, _, data = read_ncu(sys.argv[1])
    col = {h: i for i, h in enumerate(header)}
    with open(sys.argv[2], newline="") as f:
        points = [r for r in csv.DictReader(f) if r["name"].startswith("l2_retain")]
    # Each row's method says how many launches its time is the median of.
    reps = [re.search(r"median of (\d+) launches", r["method"]) for r in points]
    if not points or not all(reps) or len({int(m.group(1)) for m in reps}) != 1:
        sys.exit(f"l2retain_summary: {sys.argv[2]}: no l2_retain rows with one launch count")
    names, per = [r["name"] for r in points], int(reps[0].group(1))
    if len(data) != per * len(names):
        sys.exit(f"l2retain_summary: {len(data)} profiled launches, {per} expected for each of "
                 f"{len(names)} points; refusing to guess the mapping")

    def value(launch, metric):
        return float(launch[col[metric]].replace(",", ""))

    for i, name in enumerate(names):
        launches = data[i * per:(i + 1) * per]
        ratio = statistics.median(value(l, "dram__bytes_read.sum") / STREAM_BYTES for l in launches)
        hit = statistics.median(value(l, "lts__t_sector_hit_rate.pct") for l in launches)
        print(f"{name:28s} DRAM / stream {ratio:5.2f}   L2 hit rate {hit:5.1f}%")


if __name__ == "__main__":
    main()
