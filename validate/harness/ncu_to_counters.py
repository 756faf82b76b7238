#!/usr/bin/env python3
"""Turns an `ncu --csv --page raw --print-units base` log of `gemmsim-bench --once` into
validate/data/<gpu>/counters.csv.

    ncu_to_counters.py --sweep validate/sweeps/h100_ncu.csv --ncu ncu_raw.csv --out counters.csv

The profiled process ran the sweep's rows in file order, one launch each (the harness's --once
mode), and ncu kept only kernels whose name contains "gemm_": one main kernel per row, plus
gemm_splitk_reduce_kernel for reduction split-K rows. Launches are matched to rows in order;
the reduction kernel gets its own row with launch=reduce (it is NOT summed into the main one).
Columns: kernel,m,n,k,split_k,split_k_mode,swizzle,launch,family,dtype,<metrics...>.
"""
import argparse
import csv
import io
import re
import sys


# Columns kept from the raw page (which also lists every device attribute): the metrics
# run_gpu.sh asks for, and the launch geometry ncu saw.
KEEP = [
    "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "lts__t_sector_hit_rate.pct", "lts__t_bytes.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "sm__inst_executed_pipe_tensor.sum", "sm__inst_executed_pipe_tensor_op_hmma.sum",
    "smsp__inst_executed_pipe_fma.sum", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "sm__cycles_elapsed.avg", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "launch__grid_size", "launch__block_size", "launch__registers_per_thread",
    "launch__shared_mem_per_block_dynamic", "launch__waves_per_multiprocessor",
]


def read_sweep(path):
    rows = []
    with open(path) as f:
        lines = [l for l in f if l.strip() and not l.lstrip().startswith("#")]
    for r in csv.DictReader(io.StringIO("".join(lines))):
        rows.append(r)
    return rows


def kernel_name(r):
    """Mirror of kernels/common/kernel_name.hpp for the families in the sweeps."""
    tile = f"{r['block_m']}x{r['block_n']}x{r['block_k']}"
    if r["dtype"] == "f32":
        if r["family"] == "tiled":
            name = f"gemmsim_simt_sgemm_tiled_{tile}_t{r['thread_m']}x{r['thread_n']}"
        else:
            name = (f"gemmsim_simt_sgemm_{tile}_t{r['thread_m']}x{r['thread_n']}_"
                    f"{r['stages']}stage")
    else:
        inst = "1688gemm" if r["dtype"] == "tf32" else "16816gemm"
        prefix = "gemmsim_tensorop_"
        if r["family"] == "warp-specialized":
            variant = r.get("ws_variant") or "ampere"
            prefix = f"gemmsim_ws_{variant}_"
            if variant == "hopper":
                inst = "wgmma"
        name = (f"{prefix}{r['dtype']}_{inst}_{tile}_{r['warps_m']}x{r['warps_n']}w_"
                f"{r['stages']}stage_{r['smem_layout']}")
        if r["family"] == "warp-specialized":
            name += f"_{r.get('consumers') or 1}c"
    if int(r["split_k"]) > 1:
        name += f"_splitk{r['split_k']}" + ("a" if r["split_k_mode"] == "atomic" else "r")
    if int(r["swizzle"]) > 1:
        name += f"_tb{r['swizzle']}"
    return name


def read_ncu(path):
    with open(path, newline="") as f:
        text = f.read()
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    reader = list(csv.reader(lines[start:]))
    header, units, data = reader[0], reader[1], reader[2:]
    return header, units, data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", required=True)
    ap.add_argument("--ncu", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    sweep = [r for r in read_sweep(a.sweep) if r["family"] != "cublas"]
    header, units, data = read_ncu(a.ncu)
    col = {h: i for i, h in enumerate(header)}
    kname = col["Kernel Name"]
    metrics = [h for h in header if h in KEEP]
    launches = [d for d in data if re.search(r"gemm_(tiled|simt|tensorop|splitk|ws_)", d[kname])]
    expected = []
    for r in sweep:
        expected.append((r, "main"))
        if int(r["split_k"]) > 1 and r["split_k_mode"] == "reduction":
            expected.append((r, "reduce"))
    if len(launches) != len(expected):
        print(f"ncu_to_counters: {len(launches)} profiled launches but {len(expected)} expected "
              "from the sweep; refusing to guess the mapping", file=sys.stderr)
        return 1
    out_cols = ["kernel", "m", "n", "k", "split_k", "split_k_mode", "swizzle", "launch",
                "family", "dtype", "ncu_kernel_function"]
    out_cols += [f"{m}" for m in metrics]
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(out_cols)
        for (r, which), d in zip(expected, launches):
            fn = d[kname]
            if which == "reduce":
                want = "splitk_reduce"
            elif r["family"] == "warp-specialized":
                want = "ws_" + (r.get("ws_variant") or "ampere")
            elif r["dtype"] != "f32":
                want = "tensorop"
            else:
                want = "tiled" if r["family"] == "tiled" else "simt_pipelined"
            if want not in fn:
                print(f"ncu_to_counters: launch {fn[:60]} does not match row {kernel_name(r)}",
                      file=sys.stderr)
                return 1
            vals = [d[col[m]].replace(",", "") for m in metrics]
            w.writerow([kernel_name(r), r["m"], r["n"], r["k"], r["split_k"], r["split_k_mode"],
                        r["swizzle"], which, r["family"], r["dtype"], fn.split("<")[0].split("(")[0]]
                       + vals)
    unit_note = {m: units[col[m]] for m in metrics if units[col[m]]}
    print("ncu_to_counters: wrote", len(expected), "rows; units:", unit_note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
