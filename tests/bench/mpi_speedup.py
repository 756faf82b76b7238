#!/usr/bin/env python3
"""Speed-up of `gemmsim study` with MPI ranks (not a test: it prints figures, it does not assert).

Runs the same study without mpirun (one thread) and with `mpirun -n R gemmsim study` for each R
(one thread per rank), checks that every run wrote the same CSV, and prints wall time,
speed-up over the run without mpirun, the cores the run kept busy on average (CPU time / wall
time), and CPU time per point (user + system of all processes, including rank 0's hand-out
loop, the journal and MPI start-up), from which the scale of a cluster run follows.

    python3 tests/bench/mpi_speedup.py [--ranks 1,2,4] [--repeat 1]
                                       [--study tests/bench/mpi_study.yaml] [--gemmsim build/gemmsim]

The default study has 3120 points of a few to a few tens of milliseconds. Speed-up is bounded
by the machine's cores (printed): ranks beyond them share cores (--oversubscribe). On a shared
machine other work takes cores at random: --repeat N keeps each configuration's fastest run.
"""
import argparse
import filecmp
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd):
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{err}")
    # wait4 counts the process and every descendant it waited for: mpirun's ranks included.
    return wall, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gemmsim", default="build/gemmsim")
    ap.add_argument("--study", default=os.path.join(HERE, "mpi_study.yaml"))
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    a = ap.parse_args()
    flags = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    tmp = tempfile.mkdtemp(prefix="gemmsim_mpi_bench_")

    def best(prefix, name, threads=1):
        out = os.path.join(tmp, name)
        runs = []
        for _ in range(a.repeat):
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            runs.append(run([*prefix, a.gemmsim, "study", a.study, "--out", out, "--no-plot",
                             "--threads", str(threads)]))
        csv = glob.glob(os.path.join(out, "*.csv"))[0]
        with open(csv + ".journal") as f:
            points = sum(1 for _ in f) - 1
        return (*min(runs), csv, points)

    wall0, cpu0, csv0, points = best([], "local")
    print(f"study: {a.study}, {points} points; host: {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at start")
    print()
    print("| run | wall s | speed-up | cores busy | CPU s | CPU ms/point | same CSV |")
    print("|---|---|---|---|---|---|---|")
    print(f"| no mpirun, 1 thread | {wall0:.2f} | 1.00 | {cpu0 / wall0:.2f} | {cpu0:.2f} | "
          f"{1000 * cpu0 / points:.2f} | (reference) |")
    sys.stdout.flush()
    # The same cores used by threads of one process, for comparison.
    cores = os.cpu_count()
    wall, cpu, csv, _ = best([], "threads", cores)
    print(f"| no mpirun, {cores} threads | {wall:.2f} | {wall0 / wall:.2f} | {cpu / wall:.2f} | "
          f"{cpu:.2f} | {1000 * cpu / points:.2f} | {'yes' if filecmp.cmp(csv0, csv, shallow=False) else 'NO'} |")
    sys.stdout.flush()
    for r in [int(x) for x in a.ranks.split(",")]:
        wall, cpu, csv, _ = best([a.mpirun, *flags, "-n", str(r)], f"ranks{r}")
        same = filecmp.cmp(csv0, csv, shallow=False)
        print(f"| mpirun -n {r}, 1 thread/rank | {wall:.2f} | {wall0 / wall:.2f} | "
              f"{cpu / wall:.2f} | {cpu:.2f} | {1000 * cpu / points:.2f} | "
              f"{'yes' if same else 'NO'} |")
        sys.stdout.flush()
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
