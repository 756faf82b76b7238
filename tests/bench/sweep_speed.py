#!/usr/bin/env python3
"""Benchmark of `gemmsim sweep`: how many configurations, how long, and how far the reduced-K
extrapolation is from exact simulation.

    python3 tests/bench/sweep_speed.py [--gemmsim build/gemmsim] [--problem 4096x4096x4096]
        [--dtype f16] [--threads 2] [--sample 12] [--extra "--library"]

Prints: legal configurations, simulated, pruned, wall and CPU seconds (target: 4096^3 fp16 on
h100 in <= 60 s on 2 cores), then for --sample simulated rows (spread over the ranking) the
extrapolated time (and the time the sweep ranks by: the extrapolation raised to the row's lower
bound) against exact simulation (`gemmsim --json` with the same configuration): per-row error,
mean |error|, and the Spearman rank agreement of the sample.
"""
import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def spearman(a, b):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        for k, i in enumerate(order):
            r[i] = k + 1.0
        return r
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gemmsim", default="build/gemmsim")
    ap.add_argument("--hw", default="h100")
    ap.add_argument("--problem", default="4096x4096x4096")
    ap.add_argument("--dtype", default="f16")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sample", type=int, default=12)
    ap.add_argument("--extra", default="", help="more sweep flags, e.g. '--library --swizzle 1'")
    a = ap.parse_args()

    out = os.path.join(tempfile.mkdtemp(prefix="gemmsim_sweep_bench_"), "s")
    cmd = [a.gemmsim, "sweep", "--hw", a.hw, "--problem", a.problem, "--dtype", a.dtype,
           "--threads", str(a.threads), "--no-progress", "--out", out] + a.extra.split()
    t0 = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.time() - t0
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    meta = json.load(open(out + ".json"))
    print(f"sweep {a.hw} {a.problem} {a.dtype} {a.extra}: {meta['legal']} legal of "
          f"{meta['candidates']} candidates, {meta['simulated']} simulated, {meta['pruned']} pruned "
          f"by the lower bound; wall {wall:.1f} s, CPU {cpu.ru_utime + cpu.ru_stime:.1f} s, "
          f"{a.threads} threads ({meta['method']}); best {meta['best']}")

    rows = [r for r in csv.DictReader(open(out + ".csv")) if r["method"] == "extrapolated"]
    rows.sort(key=lambda r: float(r["time_us"]))
    if not rows or a.sample <= 0:
        return 0
    step = max(1, len(rows) // a.sample)
    sample = rows[::step][: a.sample]
    fast, ranked, exact = [], [], []
    for r in sample:
        flags = ["--hw", a.hw, "--problem", a.problem, "--dtype", r["dtype"], "--kernel", r["family"],
                 "--tiles", f"{r['block_m']}x{r['block_n']}x{r['block_k']}",
                 "--warps", f"{r['warps_m']}x{r['warps_n']}", "--stages", r["stages"],
                 "--split-k", r["split_k"], "--split-k-mode", r["split_k_mode"],
                 "--swizzle", r["swizzle"], "--smem-layout", r["smem_layout"], "--json"]
        if r["dtype"] == "f32":
            flags += ["--thread-tile", f"{r['thread_m']}x{r['thread_n']}"]
        if r["family"] == "warp-specialized":
            flags += ["--ws-variant", r["ws_variant"], "--consumers", r["consumers"]]
        j = json.loads(subprocess.run([a.gemmsim] + flags, check=True, capture_output=True, text=True).stdout)
        fast.append(float(r["time_us"]))
        # What the sweep ranks by: the extrapolation, raised to the lower bound on the
        # simulated time where it falls below it.
        ranked.append(max(fast[-1], float(r["lower_bound_us"] or 0)))
        exact.append(j["time_us"])
        print(f"  {r['kernel']:<64} extrapolated {fast[-1]:9.2f} us  ranked at {ranked[-1]:9.2f} us  "
              f"exact {exact[-1]:9.2f} us  {100 * (fast[-1] - exact[-1]) / exact[-1]:+6.2f}%")
    for name, v in (("extrapolated", fast), ("ranked (max with the bound)", ranked)):
        errs = [abs(f - e) / e * 100 for f, e in zip(v, exact)]
        print(f"  sample of {len(sample)}, {name}: mean |error| {sum(errs) / len(errs):.2f}%, "
              f"max {max(errs):.2f}%, Spearman {spearman(v, exact):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
