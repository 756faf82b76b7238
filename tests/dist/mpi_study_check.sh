#!/usr/bin/env bash
# `gemmsim study` and `gemmsim sweep` over MPI ranks, run by ctest (tests/CMakeLists.txt):
#
#   mpi_study_check.sh ranks|resume|sweep <mpiexec> <gemmsim> <scratch dir>
#
#   ranks   tests/data/dist/small_study.yaml (312 simulations) without mpirun and on 1, 2 and 4
#           ranks: the CSVs are identical, byte for byte
#   resume  the study with larger problems on 4 ranks killed (SIGTERM to mpirun) once 60 points
#           are journaled, a torn line appended to the journal as a killed writer leaves it,
#           then resumed on 2 ranks: the CSV of an uninterrupted run, and no point evaluated
#           twice
#   sweep   gemmsim sweep on 3 ranks writes the CSV of the run without mpirun
#
# Open MPI refuses to start as root without --allow-run-as-root (CI may be root), and more
# ranks than cores without --oversubscribe.
set -euo pipefail
check=$1 mpiexec=$2 gemmsim=$(realpath "$3") dir=$4
study="$(cd "$(dirname "$0")/../data/dist" && pwd)/small_study.yaml"
flags=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$dir" && mkdir -p "$dir/local"
points=312  # simulations of the small study
entries() { echo $(($(wc -l < "$1") - 1)); }  # journal lines less the header

case "$check" in
ranks)
  "$gemmsim" study "$study" --out "$dir/local" --no-plot --threads 2 > /dev/null
  [ "$(entries "$dir/local/mpi-small.csv.journal")" -eq $points ] || fail "local journal size"
  for n in 1 2 4; do
    mkdir -p "$dir/r$n"
    "$mpiexec" "${flags[@]}" -n $n "$gemmsim" study "$study" --out "$dir/r$n" --no-plot \
      --threads 1 > "$dir/r$n.stdout"
    cmp "$dir/local/mpi-small.csv" "$dir/r$n/mpi-small.csv" || fail "$n ranks: CSV differs"
    # Rank 0 alone prints the summary.
    [ "$(grep -c '^gemmsim study mpi-small' "$dir/r$n.stdout")" -eq 1 ] || fail "$n ranks: summary printed $(grep -c '^gemmsim study' "$dir/r$n.stdout") times"
  done
  ;;
resume)
  # Larger problems than the ranks check, so that the killed run cannot finish between two
  # polls of its journal (the small study takes about 2 s on an idle 2-core machine).
  sed 's/^problems: .*/problems: [1024x1024x1024, 2048x1024x512, 1024x1024x2048]/' "$study" \
    > "$dir/resume_study.yaml"
  study="$dir/resume_study.yaml"
  "$gemmsim" study "$study" --out "$dir/local" --no-plot --threads 2 > /dev/null
  points=$(entries "$dir/local/mpi-small.csv.journal")
  mkdir -p "$dir/killed"
  journal="$dir/killed/mpi-small.csv.journal"
  "$mpiexec" "${flags[@]}" -n 4 "$gemmsim" study "$study" --out "$dir/killed" --no-plot \
    --threads 1 > /dev/null 2>&1 &
  pid=$!
  for _ in $(seq 600); do
    [ -f "$journal" ] && [ "$(entries "$journal")" -ge 60 ] && break
    sleep 0.1
  done
  kill -TERM $pid 2>/dev/null || true
  wait $pid && fail "the killed study exited with 0 (it finished before it was killed)"
  [ ! -e "$dir/killed/mpi-small.csv" ] || fail "the killed study wrote its CSV"
  before=$(entries "$journal")
  [ "$before" -ge 60 ] && [ "$before" -lt $points ] || fail "journal holds $before points"
  printf '{"i":7,"ok":true,"row":"{\\"ind' >> "$journal"  # a write cut short
  "$mpiexec" "${flags[@]}" -n 2 "$gemmsim" study "$study" --out "$dir/killed" --no-plot \
    --threads 1 --resume > /dev/null
  cmp "$dir/local/mpi-small.csv" "$dir/killed/mpi-small.csv" || fail "resumed CSV differs"
  [ "$(entries "$journal")" -eq $points ] || fail "journal holds $(entries "$journal") entries for $points points (points redone?)"
  # Without --resume or --force the finished study is not overwritten.
  set +e
  "$gemmsim" study "$study" --out "$dir/killed" --no-plot 2> "$dir/err.txt"
  rc=$?
  set -e
  [ $rc -eq 2 ] || fail "rerun over an existing CSV exited with $rc, not 2"
  grep -q "exists" "$dir/err.txt" || fail "no 'exists' error: $(cat "$dir/err.txt")"
  ;;
sweep)
  (cd "$dir" && "$gemmsim" sweep --hw a100 --problem 512x512x512 --library --threads 2 \
    --out local --top 3 > /dev/null)
  (cd "$dir" && "$mpiexec" "${flags[@]}" -n 3 "$gemmsim" sweep --hw a100 --problem 512x512x512 \
    --library --threads 1 --out ranks3 --top 3 > ranks3.stdout)
  cmp "$dir/local.csv" "$dir/ranks3.csv" || fail "sweep CSV on 3 ranks differs"
  [ "$(grep -c '^gemmsim sweep' "$dir/ranks3.stdout")" -eq 1 ] || fail "sweep summary not printed once"
  ;;
*) fail "unknown check $check" ;;
esac
echo "ok: $check"
