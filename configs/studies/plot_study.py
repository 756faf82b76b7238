#!/usr/bin/env python3
"""Plot a `gemmsim study` CSV: speedup against the swept GPU field, one line per problem
(and per value of a second grid field). Called by `gemmsim study`; usable by hand:

    python3 configs/studies/plot_study.py study.csv study.png --title NAME --x FIELD [--series FIELD]

Exit status 3 when matplotlib is missing, so the caller can say so.
"""
import argparse
import csv
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv")
    ap.add_argument("image", help="output file; .png or .svg")
    ap.add_argument("--title", default="")
    ap.add_argument("--x", required=True, help="the grid field on the x axis")
    ap.add_argument("--series", help="a second grid field: one line per value")
    a = ap.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_study.py: matplotlib is not installed (Debian: python3-matplotlib)", file=sys.stderr)
        return 3

    with open(a.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or a.x not in rows[0]:
        print(f"plot_study.py: {a.csv} has no rows or no column '{a.x}'", file=sys.stderr)
        return 2
    # Values keep the study file's order (they carry units, e.g. 40MiB): a categorical axis.
    xs = list(dict.fromkeys(r[a.x] for r in rows))
    lines = {}
    for r in rows:
        key = r["problem"] + (f", {a.series}={r[a.series]}" if a.series else "")
        lines.setdefault(key, {})[r[a.x]] = (float(r["speedup"]), r)
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for key, pts in lines.items():
        x = [i for i, v in enumerate(xs) if v in pts]
        y = [pts[xs[i]][0] for i in x]
        ax.plot(x, y, marker="o", label=key)
        for i in x:  # annotate the configuration's stages (what a re-search changes)
            ax.annotate(f"{pts[xs[i]][1]['stages']}st", (i, pts[xs[i]][0]), fontsize=7,
                        textcoords="offset points", xytext=(3, 3))
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels(xs)
    ax.set_xlabel(a.x)
    ax.set_ylabel("speedup over the baseline value (predicted)")
    ax.set_title(a.title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.image, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
