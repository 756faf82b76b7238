#!/usr/bin/env python3
"""Writes the H100 sweep descriptions read by gemmsim-bench.

    python3 validate/sweeps/gen_h100.py      # -> validate/sweeps/h100.csv, h100_ncu.csv

Every configuration named here must exist in kernels/cuda/library.inc (kLibraryFull);
split_k, split_k_mode and swizzle are run-time knobs. Rows are grouped by shape so that
ranking within a shape can be judged (>= 5 kernel configurations per shape).
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
COLS = ("family,dtype,m,n,k,block_m,block_n,block_k,warps_m,warps_n,thread_m,thread_n,"
        "stages,split_k,split_k_mode,swizzle,smem_layout").split(",")

# SIMT fp32: name -> (family, bm, bn, bk, wm, wn, tm, tn)
SIMT = {
    "T32": ("tiled", 32, 32, 8, 1, 2, 4, 4),
    "T32t2": ("tiled", 32, 32, 8, 2, 4, 2, 2),
    "T64": ("tiled", 64, 64, 8, 2, 4, 4, 4),
    "T64k16": ("tiled", 64, 64, 16, 2, 4, 4, 4),
    "T64t8": ("tiled", 64, 64, 8, 2, 1, 8, 8),
    "T128x64": ("tiled", 128, 64, 8, 4, 2, 8, 4),
    "T128": ("tiled", 128, 128, 8, 2, 4, 8, 8),
    "T128k16": ("tiled", 128, 128, 16, 2, 4, 8, 8),
    "P128": ("pipelined", 128, 128, 8, 2, 4, 8, 8),
    "P128w42": ("pipelined", 128, 128, 8, 4, 2, 8, 8),
    "P128k16": ("pipelined", 128, 128, 16, 2, 4, 8, 8),
    "P128x64": ("pipelined", 128, 64, 8, 2, 2, 8, 8),
    "P64x128": ("pipelined", 64, 128, 8, 2, 2, 8, 8),
    "P64": ("pipelined", 64, 64, 8, 2, 1, 8, 8),
    "P64t4": ("pipelined", 64, 64, 16, 2, 4, 4, 4),
    "P32": ("pipelined", 32, 32, 8, 1, 2, 4, 4),
    "P256": ("pipelined", 256, 128, 16, 4, 4, 8, 8),
    "P128x32": ("pipelined", 128, 32, 16, 4, 1, 8, 4),
    "P32x128": ("pipelined", 32, 128, 16, 1, 4, 4, 8),
}
# Tensor core, 16-bit: name -> (bm, bn, bk, wm, wn, stages, layout)
TC16 = {
    "128x128x32s2": (128, 128, 32, 2, 2, 2, "swz"),
    "128x128x32s3": (128, 128, 32, 2, 2, 3, "swz"),
    "128x128x32s4": (128, 128, 32, 2, 2, 4, "swz"),
    "128x128x32s5": (128, 128, 32, 2, 2, 5, "swz"),
    "128x128x32s3pad": (128, 128, 32, 2, 2, 3, "pad"),
    "128x128x32s4pad": (128, 128, 32, 2, 2, 4, "pad"),
    "128x128x32s3naive": (128, 128, 32, 2, 2, 3, "naive"),
    "128x128x32w42": (128, 128, 32, 4, 2, 3, "swz"),
    "128x128x64s3": (128, 128, 64, 2, 2, 3, "swz"),
    "128x128x64s4": (128, 128, 64, 2, 2, 4, "swz"),
    "128x128x16s4": (128, 128, 16, 2, 2, 4, "swz"),
    "128x256x32s3": (128, 256, 32, 2, 4, 3, "swz"),
    "128x256x32s4": (128, 256, 32, 2, 4, 4, "swz"),
    "128x256x32s3pad": (128, 256, 32, 2, 4, 3, "pad"),
    "128x256x64s3": (128, 256, 64, 2, 4, 3, "swz"),
    "256x128x32s3": (256, 128, 32, 4, 2, 3, "swz"),
    "256x128x32s4": (256, 128, 32, 4, 2, 4, "swz"),
    "256x128x64s3": (256, 128, 64, 4, 2, 3, "swz"),
    "128x64x32": (128, 64, 32, 2, 2, 3, "swz"),
    "64x128x32": (64, 128, 32, 2, 2, 3, "swz"),
    "64x64x32": (64, 64, 32, 2, 2, 3, "swz"),
    "64x64x32s4pad": (64, 64, 32, 2, 2, 4, "pad"),
    "64x64x64": (64, 64, 64, 2, 2, 3, "swz"),
    "32x32x64": (32, 32, 64, 2, 2, 3, "swz"),
    "128x32x32": (128, 32, 32, 4, 1, 3, "swz"),
    "32x128x32": (32, 128, 32, 1, 4, 3, "swz"),
}
TF32 = {
    "128x128x16s3": (128, 128, 16, 2, 2, 3, "swz"),
    "128x128x16s4": (128, 128, 16, 2, 2, 4, "swz"),
    "128x128x16s5": (128, 128, 16, 2, 2, 5, "swz"),
    "128x128x16pad": (128, 128, 16, 2, 2, 3, "pad"),
    "128x128x16naive": (128, 128, 16, 2, 2, 3, "naive"),
    "128x128x32": (128, 128, 32, 2, 2, 3, "swz"),
    "128x128x8": (128, 128, 8, 2, 2, 4, "swz"),
    "128x256x16": (128, 256, 16, 2, 4, 3, "swz"),
    "256x128x16": (256, 128, 16, 4, 2, 3, "swz"),
    "128x64x32": (128, 64, 32, 2, 2, 3, "swz"),
    "64x64x16": (64, 64, 16, 2, 2, 3, "swz"),
    "64x64x32": (64, 64, 32, 2, 2, 4, "swz"),
    "32x32x32": (32, 32, 32, 2, 2, 3, "swz"),
}


def row(dtype, name, m, n, k, split=1, mode="atomic", sw=1):
    if dtype == "f32":
        fam, bm, bn, bk, wm, wn, tm, tn = SIMT[name]
        stages, layout = (1 if fam == "tiled" else 2), "pad"
    else:
        table = TF32 if dtype == "tf32" else TC16
        bm, bn, bk, wm, wn, stages, layout = table[name]
        fam, tm, tn = "pipelined", 0, 0
    return [fam, dtype, m, n, k, bm, bn, bk, wm, wn, tm, tn, stages, split, mode, sw, layout]


def shape_rows(m, n, k, spec):
    """spec: list of (dtype, name[, split, mode, swizzle])."""
    return [row(s[0], s[1], m, n, k, *s[2:]) for s in spec]


def many(dtype, names, **kw):
    return [(dtype, n) for n in names]


SIMT_ALL = list(SIMT)
TC16_ALL = list(TC16)
TF32_ALL = list(TF32)

rows = []
# --- squares -----------------------------------------------------------------------------
rows += shape_rows(256, 256, 256, [
    ("bf16", "64x64x32"), ("bf16", "32x32x64"), ("bf16", "64x128x32"), ("bf16", "128x64x32"),
    ("bf16", "128x128x32s3"), ("bf16", "64x64x64"), ("bf16", "32x32x64", 2, "atomic"),
    ("f16", "64x64x32"), ("f16", "32x32x64"),
    ("tf32", "64x64x16"), ("tf32", "32x32x32"),
    ("f32", "P32"), ("f32", "P64"), ("f32", "T32"), ("f32", "T64"), ("f32", "P64t4")])
rows += shape_rows(512, 512, 512, [
    ("bf16", "64x64x32"), ("bf16", "32x32x64"), ("bf16", "64x128x32"), ("bf16", "128x64x32"),
    ("bf16", "128x128x32s3"), ("bf16", "64x64x64"), ("bf16", "64x64x32s4pad"),
    ("f16", "64x64x32"), ("f16", "128x128x32s3"),
    ("tf32", "64x64x16"), ("tf32", "64x64x32"), ("tf32", "128x64x32"),
    ("f32", "P32"), ("f32", "P64"), ("f32", "T32"), ("f32", "T64"), ("f32", "P64t4"),
    ("f32", "P128")])
rows += shape_rows(1024, 1024, 1024, [
    ("bf16", "64x64x32"), ("bf16", "64x128x32"), ("bf16", "128x64x32"), ("bf16", "128x128x32s3"),
    ("bf16", "128x128x32s4"), ("bf16", "128x128x64s3"), ("bf16", "64x64x64"),
    ("bf16", "128x256x32s3"), ("bf16", "128x128x32s3", 1, "atomic", 2),
    ("f16", "64x64x32"), ("f16", "128x128x32s3"), ("f16", "64x128x32"),
    ("tf32", "64x64x16"), ("tf32", "128x64x32"), ("tf32", "128x128x16s3"),
    ("f32", "P64"), ("f32", "P128"), ("f32", "P128x64"), ("f32", "P64x128"), ("f32", "T64"),
    ("f32", "T128")])
rows += shape_rows(2048, 2048, 2048,
                   many("bf16", TC16_ALL) +
                   [("f16", n) for n in ("128x128x32s3", "128x128x32s4", "128x256x32s3",
                                         "64x128x32", "128x128x64s3")] +
                   [("tf32", n) for n in ("128x128x16s3", "128x128x16s4", "128x64x32",
                                          "64x64x32")] +
                   many("f32", SIMT_ALL))
rows += shape_rows(4096, 4096, 4096,
                   many("bf16", TC16_ALL) +
                   [("bf16", "128x256x32s3", 1, "atomic", sw) for sw in (2, 4, 8)] +
                   [("bf16", "128x128x32s3", 1, "atomic", sw) for sw in (2, 4, 8)] +
                   many("f16", TC16_ALL) + many("tf32", TF32_ALL) +
                   [("f32", n) for n in ("P128", "P128w42", "P128k16", "P128x64", "P64x128",
                                         "P256", "P64", "T128", "T128k16", "T64")] +
                   [("f32", "P128", 1, "atomic", sw) for sw in (2, 4)])
rows += shape_rows(8192, 8192, 8192,
                   [("bf16", n) for n in ("128x256x32s3", "128x256x32s4", "256x128x32s3",
                                          "256x128x32s4", "128x256x64s3", "256x128x64s3",
                                          "128x128x32s3", "128x128x32s4", "128x128x64s3",
                                          "128x256x32s3pad")] +
                   [("bf16", "128x256x32s3", 1, "atomic", sw) for sw in (2, 4, 8)] +
                   [("bf16", "256x128x32s3", 1, "atomic", sw) for sw in (2, 4)] +
                   [("f16", n) for n in ("128x256x32s3", "128x256x32s4", "256x128x32s3",
                                         "128x128x32s3")] +
                   [("f16", "128x256x32s3", 1, "atomic", 4)] +
                   [("tf32", n) for n in ("128x128x16s3", "128x128x16s4", "128x256x16",
                                          "256x128x16", "128x128x32")] +
                   [("f32", n) for n in ("P128", "P128w42", "P256", "T128")] +
                   [("f32", "P128", 1, "atomic", 4)])
# --- non-multiples ---------------------------------------------------------------------------
for m, n, k in ((1000, 1000, 1000), (3000, 3000, 3000), (4097, 4097, 4097),
                (3000, 1000, 4097)):
    rows += shape_rows(m, n, k, [
        ("bf16", "128x128x32s3"), ("bf16", "128x256x32s3"), ("bf16", "64x64x32"),
        ("bf16", "128x64x32"), ("bf16", "128x128x64s3"), ("bf16", "256x128x32s3"),
        ("f16", "128x128x32s3"), ("f16", "64x128x32"),
        ("tf32", "128x128x16s3"), ("tf32", "64x64x32"),
        ("f32", "P128"), ("f32", "P64"), ("f32", "T64"), ("f32", "T128")])
# --- skinny --------------------------------------------------------------------------------
rows += shape_rows(64, 8192, 4096, [
    ("bf16", "32x128x32"), ("bf16", "64x64x32"), ("bf16", "64x128x32"), ("bf16", "32x32x64"),
    ("bf16", "128x128x32s3"),
    ("bf16", "64x128x32", 2, "atomic"), ("bf16", "64x128x32", 4, "atomic"),
    ("bf16", "64x128x32", 4, "reduction"), ("bf16", "32x128x32", 4, "reduction"),
    ("f16", "32x128x32"), ("f16", "64x128x32", 4, "atomic"),
    ("tf32", "64x64x32"), ("tf32", "32x32x32"),
    ("f32", "P32x128"), ("f32", "P64"), ("f32", "T32"), ("f32", "P64", 4, "atomic")])
rows += shape_rows(8192, 32, 4096, [
    ("bf16", "128x32x32"), ("bf16", "32x32x64"), ("bf16", "64x64x32"),
    ("bf16", "128x32x32", 2, "atomic"), ("bf16", "128x32x32", 4, "atomic"),
    ("bf16", "128x32x32", 4, "reduction"),
    ("f16", "128x32x32"), ("tf32", "32x32x32"),
    ("f32", "P128x32"), ("f32", "P32"), ("f32", "T32"), ("f32", "P128x32", 4, "atomic")])
# --- K-heavy -------------------------------------------------------------------------------
for m, n, k in ((256, 256, 8192), (512, 512, 16384), (512, 512, 8192)):
    spec = [("bf16", "64x64x32"), ("bf16", "128x128x32s3")]
    for s in (2, 4, 8, 16):
        spec += [("bf16", "64x64x32", s, "atomic"), ("bf16", "64x64x32", s, "reduction")]
    spec += [("bf16", "128x128x32s3", 4, "atomic"), ("bf16", "128x128x32s3", 8, "reduction"),
             ("bf16", "64x64x64", 8, "atomic"),
             ("f16", "64x64x32"), ("f16", "64x64x32", 8, "atomic"),
             ("tf32", "64x64x32"), ("tf32", "64x64x32", 8, "atomic"),
             ("tf32", "64x64x32", 8, "reduction"),
             ("f32", "P64"), ("f32", "P64", 4, "atomic"), ("f32", "P64", 16, "atomic"),
             ("f32", "P64", 8, "reduction"), ("f32", "P128", 8, "atomic"), ("f32", "T64")]
    rows += shape_rows(m, n, k, spec)
# --- K-light -------------------------------------------------------------------------------
for m, n, k in ((8192, 8192, 256), (4096, 4096, 128)):
    rows += shape_rows(m, n, k, [
        ("bf16", "128x128x32s3"), ("bf16", "128x256x32s3"), ("bf16", "256x128x32s3"),
        ("bf16", "128x128x64s3"), ("bf16", "64x128x32"), ("bf16", "128x128x32s2"),
        ("bf16", "128x256x32s3", 1, "atomic", 4),
        ("f16", "128x128x32s3"), ("f16", "128x256x32s3"),
        ("tf32", "128x128x16s3"), ("tf32", "128x128x32"),
        ("f32", "P128"), ("f32", "P256"), ("f32", "T128")])
# --- the other shapes of hardware.md section 12 --------------------------------------------
rows += shape_rows(4096, 4096, 1024, [
    ("bf16", "128x128x32s3"), ("bf16", "128x256x32s3"), ("bf16", "256x128x32s3"),
    ("bf16", "128x128x32s4"), ("bf16", "128x128x64s3"), ("bf16", "128x256x32s3", 1, "atomic", 2),
    ("f16", "128x256x32s3"), ("f16", "128x128x32s3"),
    ("tf32", "128x128x16s3"), ("tf32", "128x256x16"),
    ("f32", "P128"), ("f32", "P256"), ("f32", "T128")])


def write(path, rs):
    with open(path, "w") as f:
        f.write("# generated by validate/sweeps/gen_h100.py -- edit that script, not this file\n")
        f.write(",".join(COLS) + "\n")
        for r in rs:
            f.write(",".join(str(x) for x in r) + "\n")


write(os.path.join(HERE, "h100.csv"), rows)

# ncu subset: moderate sizes (the profiler replays each kernel several times), all families,
# split-K atomic / reduction, swizzle, layouts.
ncu = []
ncu += shape_rows(2048, 2048, 2048,
                  [("bf16", n) for n in ("128x128x32s2", "128x128x32s3", "128x128x32s4",
                                         "128x128x32s3pad", "128x128x32s3naive", "128x256x32s3",
                                         "256x128x32s3", "64x64x32", "128x128x64s3",
                                         "128x128x16s4", "64x128x32", "128x64x32")] +
                  [("bf16", "128x128x32s3", 1, "atomic", sw) for sw in (2, 4, 8)] +
                  [("f16", n) for n in ("128x128x32s3", "128x256x32s3")] +
                  [("tf32", n) for n in ("128x128x16s3", "128x128x16pad", "128x128x16naive",
                                         "64x64x32")] +
                  [("f32", n) for n in ("P128", "P128w42", "P64", "P32", "T128", "T64",
                                        "T32", "P256")])
ncu += shape_rows(4096, 4096, 4096,
                  [("bf16", n) for n in ("128x256x32s3", "128x128x32s3", "256x128x32s4")] +
                  [("bf16", "128x256x32s3", 1, "atomic", 4)] +
                  [("tf32", "128x128x16s3"), ("f32", "P128"), ("f32", "T128")])
ncu += shape_rows(1000, 1000, 1000, [("bf16", "128x128x32s3"), ("f32", "P128"),
                                     ("tf32", "64x64x32")])
ncu += shape_rows(4097, 4097, 4097, [("bf16", "128x128x32s3"), ("f32", "P128")])
ncu += shape_rows(512, 512, 16384,
                  [("bf16", "64x64x32"), ("bf16", "64x64x32", 4, "atomic"),
                   ("bf16", "64x64x32", 4, "reduction"), ("bf16", "64x64x32", 16, "atomic"),
                   ("bf16", "64x64x32", 16, "reduction"), ("f32", "P64"),
                   ("f32", "P64", 8, "atomic"), ("f32", "P64", 8, "reduction")])
ncu += shape_rows(64, 8192, 4096, [("bf16", "32x128x32"), ("bf16", "64x128x32", 4, "atomic"),
                                   ("f32", "P32x128")])
ncu += shape_rows(8192, 8192, 256, [("bf16", "128x256x32s3"), ("bf16", "128x128x32s3"),
                                    ("f32", "P128")])
ncu += shape_rows(1024, 1024, 1024, [("bf16", "64x64x32"), ("f32", "P64"), ("f32", "T64")])
write(os.path.join(HERE, "h100_ncu.csv"), ncu)

# quick smoke test: every family and knob at small odd sizes (correctness first).
quick = []
for m, n, k in ((1000, 1000, 1000), (257, 129, 77), (4097, 255, 300)):
    quick += shape_rows(m, n, k, [
        ("bf16", "128x128x32s3"), ("bf16", "64x64x32", 3, "atomic"),
        ("bf16", "64x64x32", 3, "reduction"), ("bf16", "128x128x32s3", 1, "atomic", 4),
        ("f16", "64x64x32s4pad"), ("tf32", "128x128x16s3"), ("f32", "P128"), ("f32", "T64"),
        ("f32", "P128", 5, "reduction"), ("f32", "P128", 2, "atomic", 8)])
write(os.path.join(HERE, "quick.csv"), quick)


# the 8192^3 rows alone (tuning runs)
write(os.path.join(HERE, "tune_8192.csv"), [r for r in rows if r[2:5] == [8192, 8192, 8192]])

# diagnosis (ncu warp-state sections): the two main bf16 shapes at 4096^3
write(os.path.join(HERE, "diag.csv"), shape_rows(4096, 4096, 4096, [
    ("bf16", "128x256x32s3"), ("bf16", "128x128x32s3")]))

# every library instantiation, aligned and misaligned odd shapes (run with --check-only).
allk = []
for m, n, k in ((520, 264, 200), (333, 257, 77)):
    allk += shape_rows(m, n, k, many("f32", SIMT_ALL) + many("bf16", TC16_ALL) +
                       many("f16", TC16_ALL) + many("tf32", TF32_ALL))
allk += shape_rows(700, 900, 1100, [(d, n, 3, "reduction", 2) for d, n in
                                    (("bf16", "128x256x32s3"), ("tf32", "128x128x16s3"),
                                     ("f32", "P128"), ("f32", "T64"), ("f16", "64x64x32"))])
allk += shape_rows(700, 900, 1100, [(d, n, 5, "atomic", 4) for d, n in
                                    (("bf16", "256x128x32s3"), ("tf32", "128x64x32"),
                                     ("f32", "P256"), ("f32", "T32"), ("f16", "128x128x32s5"))])
write(os.path.join(HERE, "all_kernels.csv"), allk)

# compute-sanitizer: tiny problems, every kernel family and knob, aligned and misaligned.
san = []
for m, n, k in ((130, 70, 96), (67, 45, 77)):
    san += shape_rows(m, n, k, [
        ("bf16", "128x128x32s3"), ("bf16", "64x64x32", 3, "atomic"),
        ("bf16", "64x64x32", 3, "reduction"), ("bf16", "128x128x32s3", 1, "atomic", 8),
        ("f16", "64x64x32s4pad"), ("bf16", "128x128x32s3naive"), ("tf32", "128x128x16s3"),
        ("tf32", "128x128x16pad"), ("f32", "P128"), ("f32", "T64"),
        ("f32", "P128", 2, "reduction")])
write(os.path.join(HERE, "sanitize.csv"), san)


print(f"h100.csv: {len(rows)} kernel rows, {len({(r[1], r[2], r[3], r[4]) for r in rows})} "
      f"(dtype, shape) cuBLAS rows; h100_ncu.csv: {len(ncu)} rows; quick.csv: {len(quick)} rows; "
      f"all_kernels.csv: {len(allk)} rows")
