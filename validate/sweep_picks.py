#!/usr/bin/env python3
"""How good are the configurations `gemmsim sweep` picks, measured on the GPU.

For every problem (dtype, M, N, K) of a measured data set, the sweep over the kernel library
(`gemmsim sweep --library`: the library's tile configurations, split-K and swizzle as run-time
knobs) chooses one configuration. Its measured time is compared with the best measured time of
that shape (top-1 regret) and with cuBLAS on the same shape.

    # 1. here: run the sweeps, write the picks as a harness sweep file
    python3 validate/sweep_picks.py make [--gemmsim build/gemmsim] [--data validate/data/h100]
        [--hw h100] [--jobs N] [--threads 1] [--out validate/sweeps/picks_h100.csv]
    # 2. on the GPU machine: measure them (same method as the data set)
    build-gpu/gemmsim-bench --sweep validate/sweeps/picks_h100.csv --out picks.csv
    # 3. here: the report (Markdown table and summary)
    python3 validate/sweep_picks.py report [--picks validate/sweeps/picks_h100.csv]
        [--measured validate/data/h100/picks.csv]

The sweep file holds each pick and, where it is another configuration, the fastest one the data
set measured for that problem, so both run in the same session with cuBLAS beside them; the
regret is the pick's time over the faster of the two. `make` also writes `<out>.json`: per
problem the pick, its predicted time and the commit of gemmsim that chose it.
"""
import argparse
import concurrent.futures
import csv
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

KEY = ["family", "dtype", "m", "n", "k", "block_m", "block_n", "block_k", "warps_m", "warps_n",
       "thread_m", "thread_n", "stages", "split_k", "split_k_mode", "swizzle", "smem_layout",
       "consumers", "ws_variant"]
# Defaults of the harness for columns an older sweep file may lack.
DEFAULTS = {"consumers": "1", "ws_variant": "ampere", "split_k_mode": "atomic"}


def config_key(row):
    """A configuration's identity, normalised: split_k_mode only matters with split_k > 1, and
    thread tiles, consumers and ws_variant only where the family uses them."""
    r = {k: str(row.get(k) if row.get(k) not in (None, "") else DEFAULTS.get(k, "")) for k in KEY}
    if r["split_k"] == "1":
        r["split_k_mode"] = "atomic"
    if r["family"] != "warp-specialized":
        r["consumers"], r["ws_variant"] = "1", "ampere"
    return tuple(r[k] for k in KEY)


def problem_of(row):
    return (row["dtype"], int(row["m"]), int(row["n"]), int(row["k"]))


def read_measured(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            rows += [r for r in csv.DictReader(f) if r.get("family")]
    return rows


def data_rows(data_dir):
    return read_measured(sorted(glob.glob(os.path.join(data_dir, "results*.csv"))))


def make(a):
    problems = sorted({problem_of(r) for r in data_rows(a.data) if r["family"] != "cublas"})
    if a.problems:  # a subset, "dtype MxNxK" per line
        wanted = [w for w in open(a.problems).read().split("\n") if w.strip()]
        by_name = {f"{p[0]} {p[1]}x{p[2]}x{p[3]}": p for p in problems}
        problems = [by_name[w] for w in wanted if w in by_name]  # in the file's order
    commit = a.commit or subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip()
    tmp = tempfile.mkdtemp(prefix="gemmsim_picks_")
    t_all = time.time()
    # Each pick is also appended to <out>.jsonl as its sweep ends, so that a run cut short (a
    # batch job's time limit) keeps the picks it made: `make --reuse <out>.jsonl` writes the
    # sweep file from them.
    partial = os.path.splitext(a.out)[0] + ".jsonl"
    if not a.reuse:
        with open(partial, "w") as f:
            f.write(json.dumps({"commit": commit, "hw": a.hw}) + "\n")

    def one(problem):
        dt, m, n, k = problem
        out = os.path.join(tmp, f"{dt}_{m}x{n}x{k}")
        cmd = [a.gemmsim, "sweep", "--hw", a.hw, "--problem", f"{m}x{n}x{k}", "--dtype", dt,
               "--library", "--best", "--no-progress", "--out", out, "--force", "--threads", str(a.threads)]
        t0 = time.time()
        try:
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, timeout=a.timeout)
        except subprocess.TimeoutExpired:
            print(f"{dt} {m}x{n}x{k}: no pick, the sweep took more than {a.timeout} s", flush=True)
            return None
        res = json.load(open(out + ".json"))
        best = next(r for r in res["rows"] if r["kernel"] == res["best"])
        pick = {"problem": f"{dt} {m}x{n}x{k}", "kernel": best["kernel"],
                "predicted_us": best["time_us"], "config": dict(best["config"], m=m, n=n, k=k),
                "legal": res["legal"], "simulated": res["simulated"],
                "seconds": round(time.time() - t0, 2)}
        print(f"{dt} {m}x{n}x{k}: {best['kernel']} {best['time_us']:.1f} us "
              f"({res['simulated']} of {res['legal']} simulated, {pick['seconds']} s)", flush=True)
        with open(partial, "a") as f:
            f.write(json.dumps(pick) + "\n")
        return pick

    saved = None
    if a.reuse and a.reuse.endswith(".jsonl"):  # the picks a cut-short `make` appended
        lines = [json.loads(x) for x in open(a.reuse) if x.strip()]
        saved = {**lines[0], "seconds": None}
        commit, picks = saved["commit"], lines[1:]
        order = {f"{p[0]} {p[1]}x{p[2]}x{p[3]}": i for i, p in enumerate(problems)}
        picks.sort(key=lambda p: order.get(p["problem"], len(order)))
    elif a.reuse:  # the picks of an earlier `make`, e.g. to rewrite the sweep file
        saved = json.load(open(a.reuse))
        commit, picks = saved["commit"], saved["picks"]
    else:
        # Independent sweeps side by side (each on --threads threads); results in problem order.
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            picks = [p for p in pool.map(one, problems) if p is not None]
    # Beside each pick, the fastest configuration measured for that problem in the data set
    # (when it is another one), so that both are timed in the same run.
    best_measured = {}
    for r in data_rows(a.data):
        if r["family"] != "cublas":
            prob = problem_of(r)
            if prob not in best_measured or float(r["median_us"]) < float(best_measured[prob]["median_us"]):
                best_measured[prob] = r
    with open(a.out, "w") as f:
        f.write(f"# generated by validate/sweep_picks.py make (gemmsim {commit}, --hw {a.hw}, "
                "--library) -- the configuration the sweep picks for every problem of the data set\n")
        w = csv.writer(f)
        w.writerow(KEY)
        for p in picks:
            w.writerow([p["config"][k] for k in KEY])
            ref = best_measured[problem_of(p["config"])]
            if config_key(ref) != config_key(p["config"]):
                w.writerow([config_key(ref)[i] for i in range(len(KEY))])
    json.dump({**(saved if a.reuse else {}), "commit": commit, "hw": a.hw, "space": "--library",
               "seconds": saved.get("seconds") if a.reuse else round(time.time() - t_all, 1),
               "picks": picks},
              open(os.path.splitext(a.out)[0] + ".json", "w"), indent=1)
    print(f"wrote {a.out} ({len(picks)} picks, {time.time() - t_all:.0f} s)")


def report(a):
    """Per problem: the pick's time, the best time among what was measured in the same run
    (the pick and the data set's fastest configuration) and cuBLAS in that run."""
    saved = json.load(open(os.path.splitext(a.picks)[0] + ".json"))
    run = read_measured(a.measured)
    # Several runs of the same sweep file: each configuration's time is the median of its runs.
    samples, cublas_samples, names = {}, {}, {}
    for r in run:
        if r["family"] == "cublas":
            cublas_samples.setdefault(problem_of(r), []).append(float(r["median_us"]))
        else:
            samples.setdefault(problem_of(r), {}).setdefault(config_key(r), []).append(
                float(r["median_us"]))
            names[config_key(r)] = r["kernel"]
    times = {p: {k: statistics.median(v) for k, v in d.items()} for p, d in samples.items()}
    cublas = {p: statistics.median(v) for p, v in cublas_samples.items()}
    lines, regrets, vs_cublas, missing = [], [], [], []
    for p in saved["picks"]:
        c = p["config"]
        prob, key = problem_of(c), config_key(c)
        t = times.get(prob, {}).get(key)
        if t is None:
            missing.append(f"{p['problem']}: {p['kernel']}")
            continue
        best_key = min(times[prob], key=times[prob].get)
        best = times[prob][best_key]
        regret = 100.0 * (t / best - 1.0)
        regrets.append(regret)
        cb = cublas.get(prob)
        ratio = 100.0 * cb / t if cb else None
        if ratio is not None:
            vs_cublas.append(ratio)
        lines.append((prob, p["kernel"], p["predicted_us"], t,
                      "(the pick)" if best_key == key else names[best_key], best, regret, cb, ratio))
    print("| problem | pick (gemmsim sweep --library --best) | predicted (us) | measured (us) | "
          "fastest measured | its time (us) | regret | cuBLAS (us) | pick vs cuBLAS |")
    print("|---|---|---|---|---|---|---|---|---|")
    for prob, name, pred, t, bname, best, regret, cb, ratio in lines:
        print(f"| {prob[0]} {prob[1]}x{prob[2]}x{prob[3]} | `{name}` | {pred:.1f} | {t:.1f} | "
              f"{bname if bname.startswith('(') else '`' + bname + '`'} | {best:.1f} | "
              f"{regret:.1f}% | {cb if cb else float('nan'):.1f} | "
              f"{(f'{ratio:.0f}%' if ratio is not None else '-')} |")
    if regrets:
        print(f"\n{len(regrets)} problems (picks by gemmsim {saved['commit']}): top-1 regret mean "
              f"{statistics.mean(regrets):.1f}%, median {statistics.median(regrets):.1f}%, "
              f"max {max(regrets):.1f}%; the pick is the fastest in {sum(1 for r in regrets if r <= 0)}; "
              f"pick speed / cuBLAS speed mean {statistics.mean(vs_cublas):.0f}%, "
              f"median {statistics.median(vs_cublas):.0f}%")
    if missing:
        print(f"\n{len(missing)} picks not measured:", *missing, sep="\n  ")
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("--gemmsim", default="build/gemmsim")
    m.add_argument("--data", default="validate/data/h100")
    m.add_argument("--hw", default="h100")
    m.add_argument("--threads", type=int, default=1, help="threads per sweep")
    m.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="sweeps at a time")
    m.add_argument("--out", default="validate/sweeps/picks_h100.csv")
    m.add_argument("--timeout", type=float, default=None,
                   help="seconds one sweep may take; a problem whose sweep takes longer gets no pick")
    m.add_argument("--problems", help="file of 'dtype MxNxK' lines: sweep only these")
    m.add_argument("--reuse", help="picks JSON (or the .jsonl a cut-short make appended) of an "
                   "earlier make: write the sweep file only")
    m.add_argument("--commit", help="the gemmsim commit to record (default: git rev-parse HEAD; "
                   "give it where the tree has no .git, e.g. a copy on the GPU machine)")
    r = sub.add_parser("report")
    r.add_argument("--picks", default="validate/sweeps/picks_h100.csv")
    r.add_argument("--measured", nargs="+", default=["validate/data/h100/picks.csv"],
                   help="measurement CSVs (the picks runs, each configuration at the median of its runs; or the data set, for the picks it holds)")
    a = ap.parse_args()
    return make(a) if a.cmd == "make" else report(a)


if __name__ == "__main__":
    sys.exit(main())
