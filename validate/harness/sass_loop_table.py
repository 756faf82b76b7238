#!/usr/bin/env python3
"""The main-loop schedule of every kernel of a build, from its SASS, as a CSV for `gemmsim validate`.

Runs `cuobjdump -sass` on every object file under BUILD_DIR (the CUDA kernel library, built for
one SM target), demangles each function with cu++filt, and for each GEMM kernel instantiation
(`gemmsim::...kernel<ConfigTag<GemmConfig{...}>>`) writes one row:

    config                  the GemmConfig fields in declaration order, ';'-separated
    function                the kernel template's name
    loop_instructions       instructions in the main loop body (sass_loop_stalls.main_loop)
    loop_math               of which HMMA/HGMMA/FFMA
    stall_sum               the stall counts the compiler encoded in them (cycles)
    math_stall_sum          of which after the math instructions (mostly the math pipe's rate)
    alu_wait                the others' mean stall count less one: the cycles a warp waits,
                            per non-math instruction it issues, for an earlier fixed-latency
                            result (what gemmsim's integer instructions, sim::Op::alu, wait)

    validate/harness/sass_loop_table.py BUILD_DIR > sass_loops.csv

Needs cuobjdump and cu++filt (CUDA Toolkit, $CUDA_HOME/bin or PATH).
"""
import csv
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_loop_stalls import main_loop, parse_lines, split_stalls  # noqa: E402

KERNEL = re.compile(r"gemmsim::(\w+)<gemmsim::ConfigTag<gemmsim::GemmConfig\{(.*?)\}>")
CAST = re.compile(r"\((?:gemmsim::)?[A-Za-z_:]+\)")


def tool(name):
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    path = os.path.join(home, "bin", name)
    return path if os.path.exists(path) else name


def functions(obj):
    """(mangled name, dump lines) per function of one object file."""
    try:
        r = subprocess.run([tool("cuobjdump"), "-sass", obj], capture_output=True, text=True)
    except FileNotFoundError:
        sys.exit("cuobjdump not found: set CUDA_HOME or put the CUDA Toolkit's bin on PATH")
    if r.returncode:  # a host-only object has no device code
        return []
    parts = re.split(r"(?m)^\s*Function : ", r.stdout)
    return [(p.split("\n", 1)[0].strip(), p.splitlines()) for p in parts[1:]]


def main(build_dir):
    objs = sorted(glob.glob(os.path.join(build_dir, "**", "*.o"), recursive=True))
    if not objs:
        sys.exit(f"{build_dir}: no object files")
    found = [(name, lines) for o in objs for name, lines in functions(o)]
    try:
        demangled = subprocess.run([tool("cu++filt")], input="\n".join(n for n, _ in found),
                                   capture_output=True, text=True, check=True).stdout.splitlines()
    except FileNotFoundError:
        sys.exit("cu++filt not found: set CUDA_HOME or put the CUDA Toolkit's bin on PATH")
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["config", "function", "loop_instructions", "loop_math", "stall_sum",
                  "math_stall_sum", "alu_wait"])
    seen = set()
    for (name, lines), dem in zip(found, demangled):
        m = KERNEL.search(dem)
        if not m:
            continue
        config = ";".join(f.strip() for f in CAST.sub("", m.group(2)).split(","))
        if (config, m.group(1)) in seen:
            continue
        seen.add((config, m.group(1)))
        body = main_loop(parse_lines(lines))
        if not body:
            continue
        math, other = ([max(1, s) for s in x] for x in split_stalls(body))
        alu_wait = sum(other) / len(other) - 1 if other else 0.0
        out.writerow([config, m.group(1), len(body), len(math), sum(math) + sum(other),
                      sum(math), f"{alu_wait:.4f}"])
    if not seen:
        sys.exit(f"{build_dir}: no gemmsim kernel in the device code of its object files")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
