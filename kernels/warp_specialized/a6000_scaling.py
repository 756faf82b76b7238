#!/usr/bin/env python3
"""Plausibility of the warp-specialized model on a GPU we cannot run: the literature's setting
(models.md section 4: an RTX A6000, M, N, K multiples of 128 up to 1024, Tm, Tn in {64, 128},
Tk 64), simulated with the Ampere variant (the A6000 has no TMA or wgmma), XOR-swizzled
shared memory and 3 stages by default: 128x128x64 tiles need it to fit the A6000's 99 KiB per block.

Prints two tables: predicted time against K (fixed M = N = 1024, so the CTA count and waves are
fixed and only the main-loop length changes), and predicted time against the number of waves
(fixed K = 512, growing M = N). The first should be close to linear in K with a constant
intercept (prologue, epilogue, launch); the second should step with the waves
(ceil(CTAs / (SMs x CTAs per SM))), not with the CTA count itself.

    python3 kernels/warp_specialized/a6000_scaling.py [--gemmsim build/gemmsim] [--stages 3]
"""
import argparse
import json
import subprocess
import sys


def predict(gemmsim, m, n, k, tm, tn, stages):
    cmd = [gemmsim, "--hw", "a6000", "--kernel", "warp-specialized", "--ws-variant", "ampere",
           "--consumers", "1", "--dtype", "f16", "--tiles", f"{tm}x{tn}x64", "--warps", "2x2",
           "--stages", str(stages), "--smem-layout", "swz", "--problem", f"{m}x{n}x{k}", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"gemmsim failed ({' '.join(cmd)}): {out.stdout}{out.stderr}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gemmsim", default="build/gemmsim")
    ap.add_argument("--stages", type=int, default=3)
    a = ap.parse_args()
    tiles = [(64, 64), (64, 128), (128, 64), (128, 128)]

    print(f"Predicted time (us) against K, M = N = 1024, Tk = 64, {a.stages} stages, f16, swizzled smem")
    print("| K | " + " | ".join(f"{tm}x{tn}" for tm, tn in tiles) + " |")
    print("|---|" + "---|" * len(tiles))
    slopes = {t: [] for t in tiles}
    for k in range(128, 1025, 128):
        row = []
        for t in tiles:
            r = predict(a.gemmsim, 1024, 1024, k, t[0], t[1], a.stages)
            slopes[t].append((k, r["time_us"]))
            row.append(f"{r['time_us']:.2f}")
        print(f"| {k} | " + " | ".join(row) + " |")
    print("\nLeast-squares fit time = a + b * K (us, us per 128 of K), and the largest deviation:")
    for t, pts in slopes.items():
        n = len(pts)
        mx = sum(k for k, _ in pts) / n
        my = sum(y for _, y in pts) / n
        b = sum((k - mx) * (y - my) for k, y in pts) / sum((k - mx) ** 2 for k, _ in pts)
        a0 = my - b * mx
        dev = max(abs(y - (a0 + b * k)) / y for k, y in pts)
        print(f"  {t[0]}x{t[1]}: a = {a0:.2f} us, b = {128 * b:.3f} us per 128, max deviation "
              f"{100 * dev:.1f}%")

    print(f"\nPredicted time (us) against waves, K = 512, M = N growing, {a.stages} stages, f16")
    print("| M = N | tile | CTAs | CTAs/SM | waves | time (us) | us per wave |")
    print("|---|---|---|---|---|---|---|")
    for t in [(64, 64), (128, 128)]:
        for mn in range(128, 1025, 128):
            r = predict(a.gemmsim, mn, mn, 512, t[0], t[1], a.stages)
            print(f"| {mn} | {t[0]}x{t[1]} | {r['ctas']} | {r['ctas_per_sm']} | {r['waves']} | "
                  f"{r['time_us']:.2f} | {r['time_us'] / r['waves']:.2f} |")


if __name__ == "__main__":
    main()
