#!/usr/bin/env python3
"""Writes the warp-specialized sweep descriptions read by gemmsim-bench.

    python3 validate/sweeps/gen_ws.py   # -> ws_h100.csv, ws_ncu.csv, ws_sanitize.csv, ws_check.csv

Every configuration named here must exist in kernels/cuda/library.inc (kLibraryFull, the wsa()
and wsh() entries). Same shape mix as h100.csv (gen_h100.py): squares 256..8192, 1000^3,
3000^3, 4097^3, 3000x1000x4097, skinny, K-heavy, K-light, 4096x4096x1024, with >= 5
warp-specialized configurations per shape. The Hopper variant needs K and N multiples of 8
(TMA row pitch), so the 4097 shapes take Ampere rows only.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
COLS = ("family,dtype,m,n,k,block_m,block_n,block_k,warps_m,warps_n,thread_m,thread_n,"
        "stages,split_k,split_k_mode,swizzle,smem_layout,consumers,ws_variant").split(",")

# Ampere variant: name -> (bm, bn, bk, wm, wn, stages, layout, consumers)
AMP = {
    "A128s2": (128, 128, 32, 2, 2, 2, "swz", 1),
    "A128s3": (128, 128, 32, 2, 2, 3, "swz", 1),
    "A128s4": (128, 128, 32, 2, 2, 4, "swz", 1),
    "A128s6": (128, 128, 32, 2, 2, 6, "swz", 1),
    "A128s4pad": (128, 128, 32, 2, 2, 4, "pad", 1),
    "A128w41": (128, 128, 32, 4, 1, 3, "swz", 1),
    "A128k64": (128, 128, 64, 2, 2, 3, "swz", 1),
    "A64s3": (64, 64, 32, 2, 2, 3, "swz", 1),
    "A64s5": (64, 64, 32, 2, 2, 5, "swz", 1),
    "A64k64s2": (64, 64, 64, 2, 2, 2, "swz", 1),
    "A64k64s7": (64, 64, 64, 2, 2, 7, "swz", 1),
    "A128x64": (128, 64, 32, 2, 2, 3, "swz", 1),
    "A64x128": (64, 128, 32, 2, 2, 4, "swz", 1),
    "A128c2s3": (128, 128, 32, 4, 2, 3, "swz", 2),
    "A128c2s5": (128, 128, 32, 4, 2, 5, "swz", 2),
    "A128c2s7": (128, 128, 32, 4, 2, 7, "swz", 2),
    "A128c2w24": (128, 128, 32, 2, 4, 4, "swz", 2),
    "A128c2k64": (128, 128, 64, 4, 2, 3, "swz", 2),
    "A256x64c2": (256, 64, 32, 4, 2, 3, "swz", 2),
    "A256x64k64c2": (256, 64, 64, 4, 2, 4, "swz", 2),
    "A64x256c2": (64, 256, 32, 2, 4, 4, "swz", 2),
}
AMP_F16 = {"A128s4": AMP["A128s4"], "A128c2s4": (128, 128, 32, 4, 2, 4, "swz", 2),
           "A128k64": AMP["A128k64"]}
# tf32 takes 4 bytes an element: block_k 16 moves the bytes per stage of the bf16 block_k 32.
AMP_TF32 = {"A128k16s4": (128, 128, 16, 2, 2, 4, "swz", 1),
            "A128k32c2": (128, 128, 32, 4, 2, 3, "swz", 2),
            "A128k16s2": (128, 128, 16, 2, 2, 2, "swz", 1),
            "A128k16s6": (128, 128, 16, 2, 2, 6, "swz", 1),
            "A128k16c2w24": (128, 128, 16, 2, 4, 4, "swz", 2),
            "A256x64k16c2": (256, 64, 16, 4, 2, 3, "swz", 2)}
# Hopper variant: name -> (bm, bn, stages, consumers); block_k 64, (4 * consumers) x 1 warps.
HOP = {
    "H64x64s2": (64, 64, 2, 1), "H64x64s4": (64, 64, 4, 1), "H64x64s7": (64, 64, 7, 1),
    "H64x128s3": (64, 128, 3, 1), "H64x128s5": (64, 128, 5, 1),
    "H64x256s3": (64, 256, 3, 1), "H64x256s4": (64, 256, 4, 1),
    "H128s3c1": (128, 128, 3, 1), "H128s4c1": (128, 128, 4, 1), "H128s6c1": (128, 128, 6, 1),
    "H128x64c1": (128, 64, 4, 1), "H64x192": (64, 192, 4, 1),
    "H128s3": (128, 128, 3, 2), "H128s4": (128, 128, 4, 2), "H128s5": (128, 128, 5, 2),
    "H128s7": (128, 128, 7, 2),
    "H128x256s2": (128, 256, 2, 2), "H128x256s3": (128, 256, 3, 2), "H128x256s4": (128, 256, 4, 2),
    "H256x128s2": (256, 128, 2, 2), "H256x128s3": (256, 128, 3, 2), "H256x128s4": (256, 128, 4, 2),
    "H128x64s4": (128, 64, 4, 2), "H128x64s6": (128, 64, 6, 2), "H256x64": (256, 64, 4, 2),
    "H128x192s3": (128, 192, 3, 2), "H128x192s4": (128, 192, 4, 2),
}
HOP_F16 = {"H128x256s4": HOP["H128x256s4"], "H128s4": HOP["H128s4"],
           "H256x128s3": HOP["H256x128s3"], "H128s4c1": HOP["H128s4c1"]}


def row(dtype, name, m, n, k, sw=1):
    if name.startswith("H"):
        bm, bn, st, cons = (HOP_F16 if dtype == "f16" else HOP)[name]
        return ["warp-specialized", dtype, m, n, k, bm, bn, 64, 4 * cons, 1, 0, 0, st, 1,
                "atomic", sw, "swz", cons, "hopper"]
    table = {"bf16": AMP, "f16": AMP_F16, "tf32": AMP_TF32}[dtype]
    bm, bn, bk, wm, wn, st, lay, cons = table[name]
    return ["warp-specialized", dtype, m, n, k, bm, bn, bk, wm, wn, 0, 0, st, 1, "atomic", sw,
            lay, cons, "ampere"]


def shape_rows(m, n, k, spec):
    """spec: names (bf16) or (dtype, name[, swizzle]) tuples."""
    out = []
    for s in spec:
        if isinstance(s, str):
            out.append(row("bf16", s, m, n, k))
        else:
            out.append(row(s[0], s[1], m, n, k, *s[2:]))
    return out


rows = []
# --- squares -------------------------------------------------------------------------------
rows += shape_rows(256, 256, 256, ["H64x64s4", "H64x128s3", "H128s4", "A64s3", "A64k64s2",
                                   "A128s3"])
rows += shape_rows(512, 512, 512, ["H64x64s4", "H128s4c1", "H128s4", "A64s5", "A128s4",
                                   "A128x64"])
rows += shape_rows(1024, 1024, 1024, ["H64x128s5", "H128s3c1", "H128s5", "H128x256s3",
                                      "A128s4", "A128c2s3", "A64x128"])
rows += shape_rows(1536, 1536, 1536, ["H128s4c1", "H128s4", "H128x256s3", "H256x128s3",
                                      "A128s4", "A128c2s5"])
rows += shape_rows(2048, 2048, 2048, ["H128s4c1", "H128s4", "H128x256s3", "H256x128s3",
                                      "H128x64s6", "A128s4", "A128c2s5", "A128k64"])
rows += shape_rows(4096, 4096, 4096, ["H128s3", "H128s7", "H128x256s2", "H128x256s3",
                                      "H128x256s4", "H256x128s2", "H256x128s4", "H128x192s4",
                                      "H64x256s4", "H128s6c1", "A128s2", "A128s6", "A128s4pad",
                                      "A128c2w24", "A256x64c2", ("bf16", "H128x256s4", 4),
                                      ("bf16", "A128s4", 4)])
rows += shape_rows(8192, 8192, 8192, ["H128x256s2", "H128x256s3", "H128x256s4", "H256x128s2",
                                      "H256x128s3", "H256x128s4", "H128s4", "H128x192s3",
                                      "H128s4c1", "H64x256s3", "A128s4", "A128c2s3", "A128k64",
                                      ("bf16", "H128x256s3", 4), ("bf16", "H256x128s3", 4),
                                      ("f16", "H128x256s4"), ("f16", "H128s4"),
                                      ("f16", "A128s4"), ("f16", "A128c2s4"),
                                      ("f16", "H256x128s3"), ("f16", "H128s4c1"),
                                      ("f16", "A128k64")])
# --- odd sizes -----------------------------------------------------------------------------
rows += shape_rows(1000, 1000, 1000, ["H128s4", "H64x128s3", "H128x64c1", "A128s3", "A64s3",
                                      "A128c2s3"])
rows += shape_rows(3000, 3000, 3000, ["H128x256s3", "H128s4", "H256x128s3", "H128s4c1",
                                      "A128s4", "A128c2s5"])
rows += shape_rows(4097, 4097, 4097, ["A128s3", "A128s4", "A64s3", "A128c2s3", "A64x128"])
rows += shape_rows(3000, 1000, 4097, ["A128s3", "A128s4", "A64s5", "A128c2s3", "A128x64"])
# --- skinny --------------------------------------------------------------------------------
rows += shape_rows(64, 8192, 4096, ["H64x64s4", "H64x128s5", "H64x256s4", "H64x192",
                                    "A64s5", "A64x128", "A64x256c2"])
rows += shape_rows(8192, 32, 4096, ["H128x64c1", "H64x64s7", "H128x64s6", "H256x64",
                                    "A128x64", "A64k64s7", "A256x64c2"])
# --- K-heavy -------------------------------------------------------------------------------
rows += shape_rows(256, 256, 8192, ["H64x64s7", "H64x64s4", "H64x128s5", "H128s6c1",
                                    "A64k64s7", "A64s5"])
rows += shape_rows(512, 512, 16384, ["H64x64s7", "H64x128s5", "H128s6c1", "H128s7",
                                     "A64k64s7", "A128s6"])
rows += shape_rows(2048, 2048, 8192, ["H128s4", "H128x256s4", "H128s6c1", "H64x128s5",
                                      "A128s4", "A128c2s7"])
# --- K-light -------------------------------------------------------------------------------
rows += shape_rows(8192, 8192, 256, ["H128x256s2", "H128s3", "H256x128s2", "H128s3c1",
                                     "A128s2", "A128c2s3"])
rows += shape_rows(4096, 4096, 128, ["H128x256s2", "H128s3", "H64x128s3", "H128s3c1",
                                     "A128s2", "A128k64"])
rows += shape_rows(8192, 8192, 1024, ["H128x256s4", "H256x128s4", "H128s5", "H128x192s4",
                                      "A128s4", "A256x64k64c2"])
rows += shape_rows(4096, 4096, 1024, ["H128x256s4", "H256x128s3", "H128s4", "H128s4c1",
                                      "A128s4", "A128c2s5"])
rows += shape_rows(4096, 2048, 4096, ["H128x256s3", "H256x128s3", "H128s4", "H128x64s4",
                                      "A128s4", "A128w41"])
# --- tf32 (Ampere variant only) ------------------------------------------------------------
rows += shape_rows(4096, 4096, 4096, [("tf32", a) for a in AMP_TF32])


def write(path, rs, note=""):
    with open(path, "w") as f:
        f.write("# generated by validate/sweeps/gen_ws.py -- edit that script, not this file\n")
        if note:
            f.write(f"# {note}\n")
        f.write(",".join(COLS) + "\n")
        for r in rs:
            f.write(",".join(str(x) for x in r) + "\n")


write(os.path.join(HERE, "ws_h100.csv"), rows)

# Session 20: the f16 8192^3 and tf32 4096^3 problems had 4 and 2 warp-specialized
# configurations, under the >= 5 per problem that ranking needs; these rows time all of them
# (the new ones and, in the same run, the ones measured before).
write(os.path.join(HERE, "ws_s20.csv"),
      [r for r in rows if (r[1], r[2], r[3], r[4]) in (("f16", 8192, 8192, 8192),
                                                        ("tf32", 4096, 4096, 4096))])

# Nsight Compute subset: both variants, 1 and 2 consumers, stages, K-light/heavy, skinny.
ncu = []
ncu += shape_rows(2048, 2048, 2048, ["H128s4c1", "H128s4", "H128x256s3", "H256x128s3",
                                     "A128s4", "A128c2s5", "A128k64"])
ncu += shape_rows(4096, 4096, 4096, ["H128s3", "H128s7", "H128x256s2", "H128x256s4",
                                     "A128s2", "A128s6", "A256x64c2"])
ncu += shape_rows(8192, 8192, 8192, ["H128x256s4", "H256x128s3", "A128s4"])
ncu += shape_rows(1000, 1000, 1000, ["H128s4", "A128s3"])
ncu += shape_rows(64, 8192, 4096, ["H64x128s5", "A64s5"])
ncu += shape_rows(8192, 8192, 256, ["H128x256s2", "A128s2"])
ncu += shape_rows(512, 512, 16384, ["H64x64s7", "A64k64s7"])
write(os.path.join(HERE, "ws_ncu.csv"), ncu)

# compute-sanitizer: tiny problems with ragged edges (racecheck, synccheck, memcheck).
san = []
san += shape_rows(200, 136, 200, ["H128x256s2", "H128s3c1", "H64x64s2"])
san += shape_rows(130, 70, 96, ["A128s3", "A128c2s3", "A64k64s2"])  # N not a vector multiple
san += shape_rows(136, 72, 96, ["A128s3", "A128c2s3"])  # aligned: cp.async + arrive.noinc
san += shape_rows(77, 45, 33, [("tf32", "A128k16s4"), "A64s3"])
write(os.path.join(HERE, "ws_sanitize.csv"), san)

# Nsight Compute warp-state diagnosis: the two variants at 4096^3.
write(os.path.join(HERE, "ws_diag.csv"), shape_rows(4096, 4096, 4096, ["A128s4", "H128x256s3"]))

# every warp-specialized library instantiation at aligned and ragged sizes (--check-only):
# 520x264x200 (not tile multiples), 1000x1000x1000, and for Ampere 333x257x77 (K, N not
# multiples of the 16-byte vector).
allk = []
for m, n, k in ((520, 264, 200), (1000, 1000, 1000), (333, 257, 77)):
    spec = [("bf16", a) for a in AMP] + [("f16", a) for a in AMP_F16] + \
           [("tf32", a) for a in AMP_TF32]
    if k % 8 == 0 and n % 8 == 0:
        spec += [("bf16", h) for h in HOP] + [("f16", h) for h in HOP_F16]
    allk += shape_rows(m, n, k, spec)
write(os.path.join(HERE, "ws_check.csv"), allk, "run with --check-only --no-cublas")

print(f"ws_h100.csv: {len(rows)} rows; ws_ncu.csv: {len(ncu)}; ws_sanitize.csv: {len(san)}; "
      f"ws_check.csv: {len(allk)}")
