#!/usr/bin/env python3
"""Speed-up of a study with MPI ranks (not a test: it prints figures, it does not assert).

Runs the same study without mpirun (one thread) and with `mpirun -n R` for each R (one thread
per rank), checks that every run wrote the same output, and prints wall time, speed-up over the
run without mpirun, the cores the run kept busy on average (CPU time / wall time), and CPU time per point
(user + system of all processes, including rank 0's hand-out loop and MPI start-up), from which
the scale of a cluster run follows. On a shared machine other work takes cores at random:
--repeat N keeps each configuration's fastest of N runs.

    python3 tests/bench/mpi_speedup.py [--ranks 1,2,4] [--points 2000] [--repeat 1]
                                       [--program build/tests/gemmsim_toy_study]

The study is tests/dist/programs/toy_study.cpp: real predictions of small GEMMs on the A100
(128^2 x 256 to 1024^2 x 2048, 64 and 128 tiles; one point in seven illegal), each point
costing a few milliseconds to a few hundred. Speed-up is bounded by the machine's cores
(os.cpu_count() is printed): ranks beyond it share cores (--oversubscribe).
"""
import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
import time


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
    ap.add_argument("--program", default="build/tests/gemmsim_toy_study")
    ap.add_argument("--points", type=int, default=2000)
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()

    def best(cmd, out):
        runs = []
        for _ in range(a.repeat):
            if os.path.exists(out):
                os.remove(out)
                os.remove(out + ".journal")
            runs.append(run(cmd))
        return min(runs)

    flags = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    tmp = tempfile.mkdtemp(prefix="gemmsim_mpi_bench_")
    base_out = os.path.join(tmp, "local.txt")
    wall0, cpu0 = best([a.program, "--points", str(a.points), "--threads", "1", "--output", base_out],
                       base_out)
    print(f"study: {a.points} points ({a.program}); host: {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at start")
    print()
    print("| run | wall s | speed-up | cores busy | CPU s | CPU ms/point | same output |")
    print("|---|---|---|---|---|---|---|")
    print(f"| no mpirun, 1 thread | {wall0:.2f} | 1.00 | {cpu0 / wall0:.2f} | {cpu0:.2f} | "
          f"{1000 * cpu0 / a.points:.2f} | (reference) |")
    for r in [int(x) for x in a.ranks.split(",")]:
        out = os.path.join(tmp, f"ranks{r}.txt")
        wall, cpu = best([a.mpirun, *flags, "-n", str(r), a.program, "--points", str(a.points),
                          "--threads", "1", "--output", out], out)
        same = filecmp.cmp(base_out, out, shallow=False)
        print(f"| mpirun -n {r}, 1 thread/rank | {wall:.2f} | {wall0 / wall:.2f} | "
              f"{cpu / wall:.2f} | {cpu:.2f} | "
              f"{1000 * cpu / a.points:.2f} | {'yes' if same else 'NO'} |")
        sys.stdout.flush()
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
