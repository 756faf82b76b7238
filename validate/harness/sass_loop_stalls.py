#!/usr/bin/env python3
"""The compiler's fixed-latency stalls in a kernel's main loop, from its SASS.

Reads the output of `cuobjdump -sass` for one function (sm_70 and later: 128-bit instructions,
each printed as two 64-bit words), finds the innermost backward branch whose body holds the
most tensor-core (HMMA/HGMMA) or FFMA instructions, and prints per loop body: instructions, opcode
counts, and the stall counts the compiler encoded (bits 105-108 of each instruction: the cycles
the warp waits before it may issue its next instruction). Nsight Compute's `wait` stall per
issued instruction is about the mean stall count less one, for code that runs as scheduled.

    cuobjdump -sass kernel.o > k.sass   # one function: cut at its "Function :" line
    validate/harness/sass_loop_stalls.py k.sass [more.sass ...]

The body is the static one: instructions on paths the run skips (bounds checks, element-wise
copies) are counted too.
"""
import collections
import re
import sys

INST = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\* (0x[0-9a-f]{16}) \*/")
WORD = re.compile(r"/\* (0x[0-9a-f]{16}) \*/")


def parse(path):
    """(address, text, high control word) per instruction."""
    return parse_lines(open(path).read().splitlines())


def parse_lines(lines):
    """(address, text, high control word) per instruction of one function's dump."""
    out, i = [], 0
    while i < len(lines):
        m = INST.search(lines[i])
        w = WORD.search(lines[i + 1]) if m and i + 1 < len(lines) else None
        if w:
            out.append((int(m.group(1), 16), m.group(2).strip(), int(w.group(1), 16)))
            i += 2
        else:
            i += 1
    return out


def opcode(text):
    words = text.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else ""


def is_math(text):
    return opcode(text) in ("HMMA", "HGMMA", "FFMA")


def split_stalls(body):
    """The stall counts of a loop body's math instructions and of the others."""
    math, other = [], []
    for _, text, hi in body:
        (math if is_math(text) else other).append((hi >> 41) & 0xF)
    return math, other


def main_loop(ins):
    """The body of the innermost loop (backward branch) with the most math instructions (the
    shortest of equals); empty if no loop has any. Innermost: a loop around another math loop
    (a persistent kernel's loop over output tiles, around its K loop) is not the main loop."""
    at = {a: k for k, (a, _, _) in enumerate(ins)}
    loops = []  # (first index, last index, math instructions)
    for k, (a, text, _) in enumerate(ins):
        m = re.search(r"0x([0-9a-f]+)", text) if opcode(text) == "BRA" else None
        target = int(m.group(1), 16) if m else None
        if target is None or target >= a or target not in at:
            continue
        math = sum(is_math(t) for _, t, _ in ins[at[target]: k + 1])
        if math:
            loops.append((at[target], k, math))

    def encloses(outer, inner):
        return outer != inner and outer[0] <= inner[0] and inner[1] <= outer[1]

    inner = [l for l in loops if not any(encloses(l, o) for o in loops)]
    if not inner:
        return []
    first, last, _ = max(inner, key=lambda l: (l[2], l[0] - l[1]))
    return ins[first: last + 1]


def summarize(path):
    ins = parse(path)
    body = main_loop(ins)
    if not body:
        return f"{path}: no loop with math instructions ({len(ins)} instructions)"
    math, other = split_stalls(body)
    stall = math + other
    ops = collections.Counter(opcode(t) for _, t, _ in body)
    n = len(body)
    lines = [
        f"{path}: main loop {body[0][0]:#x}-{body[-1][0]:#x}, {n} instructions, "
        f"{len(math)} math; stall counts sum {sum(stall)} cycles, {sum(stall) / n:.2f} per instruction",
        "  opcodes: " + ", ".join(f"{o} {c}" for o, c in ops.most_common()),
        "  stall after a math instruction: "
        + ", ".join(f"{s}: {c}" for s, c in sorted(collections.Counter(math).items())),
        "  stall after the others: "
        + ", ".join(f"{s}: {c}" for s, c in sorted(collections.Counter(other).items())),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        print(summarize(p))
