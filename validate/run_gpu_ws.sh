#!/usr/bin/env bash
# The warp-specialized kernels on the GPU machine, in one go: build the full kernel library,
# check every warp-specialized instantiation against cuBLAS (aligned and ragged sizes),
# compute-sanitizer (memcheck, racecheck, synccheck) on tiny problems, the timed sweep, and
# Nsight Compute counters for a subset. Never changes clocks or any GPU setting.
#
#   validate/run_gpu_ws.sh [--only build|check|sanitizer|tune|sweep|ncu|diag|alt]...  [--limit S]
#
# Results in $OUT (default ./gpu-out-ws): log_ws.txt, ws_check.csv, sanitizer_ws.txt,
# results_ws.csv, results_ws_failed.csv, counters_ws.csv, ncu_raw_ws.csv, results_ws_alt.csv.
# diag: Nsight Compute warp-state and scheduler sections for ws_diag.csv (into the log).
# alt: the library rebuilt with -DGEMMSIM_WS_AMPERE_GROUP_ARRIVE (the Ampere producer arrives
# on FULL after cp.async.wait_group instead of with cp.async.mbarrier.arrive.noinc) and the
# Ampere rows of ws_h100.csv timed with it (results_ws_alt.csv), for comparison.
# --limit S: seconds allowed to the sweep and ncu steps each (timeout; partial results kept).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${OUT:-$root/gpu-out-ws}
build=${BUILD_DIR:-$root/build-gpu}
sw=$root/validate/sweeps
only=()
limit=240
while (($#)); do
  case "$1" in
    --only) only+=("$2"); shift ;;
    --limit) limit=$2; shift ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "run_gpu_ws.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"
exec > >(tee -a "$out/log_ws.txt") 2>&1
want() {
  ((${#only[@]} == 0)) && return 0
  local s
  for s in "${only[@]}"; do [[ $s == "$1" ]] && return 0; done
  return 1
}
stamp() { echo "== $(date -u +%FT%TZ) $*"; }
clock() { nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader; }
status=0
bench=$build/gemmsim-bench

if want build || [[ ! -x $bench ]]; then
  stamp "build (kernels/cuda standalone, full kernel library, $(nproc) cores)"
  gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  cmake -S "$root/kernels/cuda" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DGEMMSIM_FULL_KERNEL_LIBRARY=ON -DGEMMSIM_CUDA_ARCHS=90 >"$out/cmake_ws.txt" 2>&1 ||
    { cat "$out/cmake_ws.txt"; echo "configure failed"; exit 1; }
  t0=$SECONDS
  cmake --build "$build" -j "$(nproc)" --target gemmsim-bench 2>&1 | grep -E "error|warning|FAILED" | head -40
  [[ -x $bench ]] || { echo "build failed"; exit 1; }
  rm -f "$out/cmake_ws.txt"
  echo "build took $((SECONDS - t0)) s; $("$bench" --list | tail -1)"
  "$bench" --list | grep -c gemmsim_ws_ | sed 's/^/warp-specialized kernels in the library: /'
fi
echo "SM clock now: $(clock)"

if want check; then
  stamp "correctness of every warp-specialized instantiation (--check-only, ws_check.csv)"
  "$bench" --sweep "$sw/ws_check.csv" --check-only --no-cublas --out "$out/ws_check.csv" \
    --failed "$out/ws_check_failed.csv" | grep -E "FAILED|summary" | head -40
  echo "check rows failed: $(($(grep -vc '^#' "$out/ws_check_failed.csv") - 1))"
  if grep -q FAILED "$out/log_ws.txt"; then
    status=1
    echo "correctness failures: only the sanitizer step follows"
    only=(sanitizer)
  fi
  [[ $(wc -l <"$out/ws_check_failed.csv") -le 1 ]] && rm -f "$out/ws_check_failed.csv"
fi

if want sanitizer; then
  stamp "compute-sanitizer on tiny problems (ws_sanitize.csv)"
  {
    n=$(grep -v '^#' "$sw/ws_sanitize.csv" | tail -n +2 | wc -l)
    compute-sanitizer --tool memcheck --error-exitcode 9 "$bench" --sweep "$sw/ws_sanitize.csv" \
      --once 2>&1 | grep -E "ERROR SUMMARY|Invalid|out of bounds|once row|Error" | head -30
    echo "memcheck exit: ${PIPESTATUS[0]}"
    for ((r = 0; r < n; r++)); do
      for tool in racecheck synccheck; do
        extra=()
        [[ $tool == racecheck ]] && extra=(--racecheck-report all)
        compute-sanitizer --tool $tool "${extra[@]}" --error-exitcode 9 "$bench" \
          --sweep "$sw/ws_sanitize.csv" --row $r --once 2>&1 |
          grep -E "once row|SUMMARY|hazard|Barrier|error" | head -6
        echo "$tool row $r exit: ${PIPESTATUS[0]}"
      done
    done
  } >"$out/sanitizer_ws.txt" 2>&1
  cat "$out/sanitizer_ws.txt"
fi

if want tune; then
  stamp "8192^3 bf16: warp-specialized Hopper configurations vs cuBLAS"
  grep -E '^#|^family|,8192,8192,8192,.*hopper' "$sw/ws_h100.csv" | grep -v ',f16,' >"$out/tune.csv"
  timeout "$limit" "$bench" --sweep "$out/tune.csv" --out "$out/tune_results.csv" \
    --failed "$out/tune_failed.csv" | grep -vE "^\[" | tail -20
  echo "SM clock now: $(clock)"
  rm -f "$out/tune.csv" "$out/tune_failed.csv"
fi

if want sweep; then
  stamp "sweep ws_h100.csv: correctness, then timing"
  timeout "$limit" "$bench" --sweep "$sw/ws_h100.csv" --out "$out/results_ws.csv" \
    --failed "$out/results_ws_failed.csv" | tail -45
  rc=${PIPESTATUS[0]}
  ((rc != 0)) && { echo "sweep rc=$rc"; status=1; }
  echo "SM clock now: $(clock)"
fi

if want ncu; then
  stamp "Nsight Compute counters (--clock-control none), ws_ncu.csv"
  wanted=(gpu__time_duration.sum dram__bytes_read.sum dram__bytes_write.sum
          lts__t_sector_hit_rate.pct l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
          l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
          l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
          sm__inst_executed_pipe_tensor.sum sm__inst_executed_pipe_tensor_op_hmma.sum
          smsp__inst_executed_pipe_fma.sum sm__sass_thread_inst_executed_op_ffma_pred_on.sum
          sm__cycles_elapsed.avg sm__throughput.avg.pct_of_peak_sustained_elapsed
          lts__t_bytes.sum)
  mlist=$(IFS=,; echo "${wanted[*]}")
  timeout "$limit" ncu --clock-control none --kernel-name "regex:gemm_ws_" \
    --metrics "$mlist" --csv --page raw --print-units base --log-file "$out/ncu_raw_ws.csv" \
    "$bench" --sweep "$sw/ws_ncu.csv" --once >"$out/ncu_app.txt" 2>&1 ||
    { echo "ncu run failed"; tail -20 "$out/ncu_app.txt"; status=1; }
  tail -3 "$out/ncu_app.txt"
  rm -f "$out/ncu_app.txt"
  python3 "$root/validate/harness/ncu_to_counters.py" --sweep "$sw/ws_ncu.csv" \
    --ncu "$out/ncu_raw_ws.csv" --out "$out/counters_ws.csv" || status=1
fi

if want diag; then
  stamp "Nsight Compute warp states, ws_diag.csv"
  for r in 0 1; do
    timeout "$limit" ncu --clock-control none --kernel-name "regex:gemm_ws_" \
      --section WarpStateStats --section SchedulerStats --section SpeedOfLight \
      "$bench" --sweep "$sw/ws_diag.csv" --row $r --once 2>&1 |
      grep -vE "^==PROF==|^gemmsim-bench|^launch|^once" | grep -E "gemm_ws|Stall|Warp Cycles|Issued|Eligible|Active Warps|No Eligible|Throughput|Duration|SM Frequency|Section" | head -40
    # stall reasons: warps stalled per issued instruction, largest first
    timeout "$limit" ncu --clock-control none --kernel-name "regex:gemm_ws_" --csv --page raw \
      --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
      "$bench" --sweep "$sw/ws_diag.csv" --row $r --once 2>/dev/null | grep -E '^"' >"$out/stall.csv"
    python3 - "$out/stall.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
if len(rows) >= 3:
    h, v = rows[0], rows[2]
    st = sorted(((float(v[i].replace(",", "")), h[i]) for i in range(len(h))
                 if h[i].startswith("smsp__average_warps_issue_stalled") and v[i].strip()),
                reverse=True)
    print("  stalls per issued instruction:", ", ".join(
        f"{n.replace('smsp__average_warps_issue_stalled_', '').replace('_per_issue_active.ratio', '')}"
        f" {x:.2f}" for x, n in st[:8]))
PY
    rm -f "$out/stall.csv"
  done
fi

if want alt; then
  alt_flags=${ALT_FLAGS:--DGEMMSIM_WS_AMPERE_GROUP_ARRIVE}
  stamp "alternative build ($alt_flags)"
  alt=${build}-alt
  cmake -S "$root/kernels/cuda" -B "$alt" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DGEMMSIM_FULL_KERNEL_LIBRARY=ON -DGEMMSIM_CUDA_ARCHS=90 \
    "-DCMAKE_CUDA_FLAGS=$alt_flags" >/dev/null 2>&1 &&
    cmake --build "$alt" -j "$(nproc)" --target gemmsim-bench 2>&1 | grep -E "error|FAILED" | head
  grep -E "${ALT_ROWS:-^#|^family|ampere}" "$sw/ws_h100.csv" >"$out/alt.csv"
  timeout "$limit" "$alt/gemmsim-bench" --sweep "$out/alt.csv" --no-cublas \
    --out "$out/results_ws_alt.csv" --failed "$out/alt_failed.csv" | tail -30
  cat "$out/alt_failed.csv" | tail -n +2 | head -5
  timeout "$limit" ncu --clock-control none --kernel-name "regex:gemm_ws_" \
    --section WarpStateStats --section SpeedOfLight \
    "$alt/gemmsim-bench" --sweep "$sw/ws_diag.csv" --row 0 --once 2>&1 |
    grep -E "gemm_ws|Stall|Warp Cycles|Issued|Eligible|Throughput|Duration|SM Frequency" | head -25
  rm -f "$out/alt.csv" "$out/alt_failed.csv"
fi

stamp "summary"
for f in ws_check.csv results_ws.csv tune_results.csv counters_ws.csv; do
  [[ -f $out/$f ]] && echo "$f: $(($(wc -l <"$out/$f") - 1)) rows"
done
[[ -f $out/results_ws_failed.csv ]] && echo "results_ws_failed.csv: $(($(grep -vc '^#' "$out/results_ws_failed.csv") - 1)) failed rows"
exit $status
