#!/usr/bin/env python3
"""Simulator speed and memory benchmark (not a test: it prints figures, it does not assert).

For each GPU and problem size it runs `gemmsim --json` once, on one core, and prints the wall
time, the peak resident set size of the process and the simulated warp-instructions per second.

    python3 tests/bench/sim_speed.py [--gemmsim build/gemmsim] [--gpus a100,h100]
                                     [--sizes 1024,4096,8192] [-- extra gemmsim flags]
"""
import argparse
import json
import os
import subprocess
import sys
import time


def run_one(gemmsim, gpu, size, extra):
    cmd = [gemmsim, "--hw", gpu, "--problem", f"{size}x{size}x{size}", "--json", *extra]
    # taskset pins the simulator to one core when available, so figures are per core.
    pin = ["taskset", "-c", "0"] if shutil_which("taskset") else []
    t0 = time.perf_counter()
    proc = subprocess.Popen(pin + cmd, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"gemmsim failed: {' '.join(cmd)}")
    rss_mib = usage.ru_maxrss / 1024.0  # KiB on Linux
    pred = json.loads(out)
    return wall, rss_mib, pred["simulated_warp_instructions"], pred


def shutil_which(name):
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gemmsim", default=os.path.join("build", "gemmsim"))
    ap.add_argument("--gpus", default="a100,h100")
    ap.add_argument("--sizes", default="1024,4096,8192")
    ap.add_argument("extra", nargs="*", help="extra gemmsim flags (after --)")
    a = ap.parse_args()
    print(f"{'gpu':<6} {'problem':>16} {'wall s':>8} {'peak RSS MiB':>13} "
          f"{'warp-insts':>12} {'Minst/s':>9} {'pred us':>10} {'TFLOPS':>8}")
    for gpu in a.gpus.split(","):
        for size in (int(s) for s in a.sizes.split(",")):
            wall, rss, insts, pred = run_one(a.gemmsim, gpu, size, a.extra)
            print(f"{gpu:<6} {f'{size}^3':>16} {wall:8.2f} {rss:13.1f} {insts:12d} "
                  f"{insts / wall / 1e6:9.2f} {pred['time_us']:10.1f} {pred['tflops']:8.1f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
