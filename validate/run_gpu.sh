#!/usr/bin/env bash
# One script for the GPU machine: build, record the GPU, microbenchmarks, the sweep
# (correctness first, then timing), Nsight Compute counters, compute-sanitizer.
#
#   validate/run_gpu.sh                       # everything, full sweep
#   validate/run_gpu.sh --quick               # smoke test: small sweep, short microbench
#   validate/run_gpu.sh --only microbench     # one step (repeatable: --only sweep --only ncu)
#   validate/run_gpu.sh --sweep FILE          # another sweep description
#   validate/run_gpu.sh --only l2retain       # L2 reuse against the readers' lag (not in "everything")
#
# Steps: build info microbench sweep ncu sanitizer (and l2retain when asked for). Results go to
# $OUT (default ./gpu-out): results.csv results_failed.csv microbench.csv counters.csv
# ncu_raw.csv gpu_info.txt log.txt; l2retain: microbench_l2retain.csv ncu_l2retain.csv
# Never changes clocks, power or any GPU setting; ncu runs with --clock-control none.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${OUT:-$root/gpu-out}
build=${BUILD_DIR:-$root/build-gpu}
sweep=$root/validate/sweeps/h100.csv
ncu_sweep=$root/validate/sweeps/h100_ncu.csv
san_sweep=$root/validate/sweeps/sanitize.csv
quick=0
only=()
bench_extra=()
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --only) only+=("$2"); shift ;;
    --sweep) sweep=$(realpath "$2"); shift ;;
    --out) out=$2; shift ;;
    --bench-args) read -r -a bench_extra <<<"$2"; shift ;;
    -h|--help) sed -n 2,16p "$0"; exit 0 ;;
    *) echo "run_gpu.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
if ((quick)); then
  [[ $sweep == $root/validate/sweeps/h100.csv ]] && sweep=$root/validate/sweeps/quick.csv
fi
mkdir -p "$out"
log=$out/log.txt
exec > >(tee -a "$log") 2>&1

want() {
  ((${#only[@]} == 0)) && return 0
  local s
  for s in "${only[@]}"; do [[ $s == "$1" ]] && return 0; done
  return 1
}
stamp() { echo "== $(date -u +%FT%TZ) $*"; }
status=0

if want build || [[ ! -x $build/gemmsim-bench ]]; then
  stamp "build (standalone kernels/cuda, full kernel library, $(nproc) cores)"
  gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  cmake -S "$root/kernels/cuda" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DGEMMSIM_FULL_KERNEL_LIBRARY=ON -DGEMMSIM_CUDA_ARCHS=90 >"$out/cmake.txt" 2>&1 ||
    { cat "$out/cmake.txt"; echo "configure failed"; exit 1; }
  t0=$SECONDS
  cmake --build "$build" -j "$(nproc)" 2>&1 | grep -v "^\[" | grep -E "error|warning|FAILED" | head -40
  [[ -x $build/gemmsim-bench && -x $build/gemmsim-microbench ]] || { echo "build failed"; exit 1; }
  echo "build took $((SECONDS - t0)) s; $("$build/gemmsim-bench" --list | tail -1)"
fi

if want info; then
  stamp "GPU info (read-only queries)"
  {
    date -u
    nvidia-smi
    nvidia-smi --query-gpu=name,driver_version,pci.bus_id,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,temperature.gpu,persistence_mode,compute_mode,mig.mode.current --format=csv
    nvidia-smi -q -d CLOCK,PERFORMANCE,POWER
    nvcc --version 2>/dev/null | tail -2
    ncu --version 2>/dev/null | tail -1
  } >"$out/gpu_info.txt" 2>&1
  head -20 "$out/gpu_info.txt"
fi

if want microbench; then
  stamp "microbenchmarks"
  mb_args=(--out "$out/microbench.csv")
  ((quick)) && mb_args+=(--quick)
  "$build/gemmsim-microbench" "${mb_args[@]}" || { echo "microbench failed"; status=1; }
fi

if want sweep; then
  stamp "sweep $(basename "$sweep"): correctness, then timing"
  args=(--sweep "$sweep" --out "$out/results.csv" --failed "$out/results_failed.csv" "${bench_extra[@]}")
  "$build/gemmsim-bench" "${args[@]}" 2>"$out/bench_stderr.txt"
  rc=$?
  tries=0
  while ((rc == 3 && tries < 5)); do  # context lost on a row: resume after it
    cat "$out/bench_stderr.txt"
    next=$(grep -o -- '--first-row [0-9]*' "$out/bench_stderr.txt" | tail -1 | awk '{print $2}')
    [[ -z $next ]] && break
    "$build/gemmsim-bench" "${args[@]}" --first-row "$next" --append 2>"$out/bench_stderr.txt"
    rc=$?
    tries=$((tries + 1))
  done
  cat "$out/bench_stderr.txt"
  rm -f "$out/bench_stderr.txt"
  ((rc != 0)) && { echo "sweep finished with rc=$rc (failed rows: $out/results_failed.csv)"; status=1; }
fi

if want ncu; then
  stamp "Nsight Compute counters (--clock-control none)"
  if command -v ncu >/dev/null; then
    ns=$ncu_sweep
    if ((quick)); then
      head -8 "$ncu_sweep" >"$out/ncu_quick.csv"
      ns=$out/ncu_quick.csv
    fi
    wanted=(gpu__time_duration.sum dram__bytes_read.sum dram__bytes_write.sum
            lts__t_sector_hit_rate.pct l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
            l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
            l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
            sm__inst_executed_pipe_tensor.sum sm__inst_executed_pipe_tensor_op_hmma.sum
            smsp__inst_executed_pipe_fma.sum sm__sass_thread_inst_executed_op_ffma_pred_on.sum
            sm__cycles_elapsed.avg sm__throughput.avg.pct_of_peak_sustained_elapsed
            lts__t_bytes.sum)
    ncu --query-metrics >"$out/ncu_metrics.txt" 2>&1
    metrics=()
    for m in "${wanted[@]}"; do
      base=${m%.*}
      base=${base%.avg}
      if grep -qE "^[[:space:]]*${base}[[:space:]]" "$out/ncu_metrics.txt"; then metrics+=("$m"); else echo "ncu: no metric $m on this GPU"; fi
    done
    mlist=$(IFS=,; echo "${metrics[*]}")
    ncu --clock-control none --kernel-name "regex:gemm_(tiled|simt|tensorop|splitk|ws_)" \
      --metrics "$mlist" --csv --page raw --print-units base --log-file "$out/ncu_raw.csv" \
      "$build/gemmsim-bench" --sweep "$ns" --once >"$out/ncu_app.txt" 2>&1 ||
      { echo "ncu run failed"; tail -20 "$out/ncu_app.txt"; status=1; }
    tail -3 "$out/ncu_app.txt"
    python3 "$root/validate/harness/ncu_to_counters.py" --sweep "$ns" --ncu "$out/ncu_raw.csv" \
      --out "$out/counters.csv" || status=1
    rm -f "$out/ncu_metrics.txt" "$out/ncu_app.txt" "$out/ncu_quick.csv"
  else
    echo "ncu not found"; status=1
  fi
fi

# gemmsim-microbench --only l2retain, timed and then under Nsight Compute (the L2 left as it is,
# --cache-control none): per point, the DRAM bytes each launch read over the stream's 256 MiB
# (1: every follower found the chunk in L2; the number of groups: none did). Compare with
# `gemmsim_tests "[.calibrate][l2retain]"`, the same launches on the model's memory system.
if ((${#only[@]} > 0)) && want l2retain; then
  stamp "L2 retention by lag (gemmsim-microbench --only l2retain, then under ncu)"
  "$build/gemmsim-microbench" --only l2retain --out "$out/microbench_l2retain.csv" ||
    { echo "l2retain failed"; status=1; }
  if command -v ncu >/dev/null; then
    ncu --clock-control none --cache-control none --kernel-name retain_kernel \
      --metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum \
      --csv --page raw --print-units base --log-file "$out/ncu_l2retain.csv" \
      "$build/gemmsim-microbench" --only l2retain --out "$out/microbench_l2retain_ncu_run.csv" \
      >/dev/null 2>&1 || { echo "ncu l2retain failed"; status=1; }
    python3 "$root/validate/harness/l2retain_summary.py" "$out/ncu_l2retain.csv" \
      "$out/microbench_l2retain_ncu_run.csv" || status=1
  else
    echo "ncu not found"; status=1
  fi
fi

if want sanitizer; then
  stamp "compute-sanitizer on tiny problems"
  if command -v compute-sanitizer >/dev/null; then
    compute-sanitizer --tool memcheck --error-exitcode 9 "$build/gemmsim-bench" \
      --sweep "$san_sweep" --once 2>&1 | grep -E "ERROR SUMMARY|Invalid|out of bounds|once row" | tail -30
    echo "memcheck exit: ${PIPESTATUS[0]}"
    for r in 0 4 6 8; do
      compute-sanitizer --tool racecheck --error-exitcode 9 "$build/gemmsim-bench" \
        --sweep "$san_sweep" --row $r --once 2>&1 | grep -E "RACECHECK SUMMARY|ERROR SUMMARY|hazard" | tail -3
      echo "racecheck row $r exit: ${PIPESTATUS[0]}"
    done
  else
    echo "compute-sanitizer not found"
  fi
fi

stamp "summary"
[[ -f $out/results.csv ]] && echo "results.csv: $(($(wc -l <"$out/results.csv") - 1)) rows ($(grep -c ',cublas,' "$out/results.csv") cuBLAS)"
[[ -f $out/results_failed.csv ]] && echo "results_failed.csv: $(($(grep -vc '^#' "$out/results_failed.csv") - 1)) failed rows"
[[ -f $out/counters.csv ]] && echo "counters.csv: $(($(wc -l <"$out/counters.csv") - 1)) rows"
[[ -f $out/microbench.csv ]] && cut -d, -f1-4 "$out/microbench.csv" | awk -F, '{printf "%-34s %14s %-14s %s\n", $1, $2, $3, $4}' | head -60
exit $status
