#!/usr/bin/env bash
# MPI checks of sim/dist on one machine, run by ctest (tests/CMakeLists.txt):
#
#   mpi_check.sh ranks|resume|refuse <mpiexec> <gemmsim_toy_study> <scratch dir>
#
#   ranks   the same study without mpirun and with 1, 2 and 4 ranks: outputs identical, byte
#           for byte
#   resume  a study on 4 ranks killed after some points, then resumed on 2: the output is the
#           one an uninterrupted run writes, and the journal shows the finished points were
#           not redone
#   refuse  an existing output is not overwritten: exit code 2, the file unchanged; --force
#           replaces it
#
# Open MPI refuses to start as root without --allow-run-as-root (CI may be root), and more
# ranks than cores without --oversubscribe.
set -euo pipefail
check=$1 mpiexec=$2 prog=$3 dir=$4
flags=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
run() { local n=$1; shift; "$mpiexec" "${flags[@]}" -n "$n" "$prog" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$dir" && mkdir -p "$dir"
points=72

"$prog" --points $points --threads 2 --output "$dir/local.txt"
[ "$(wc -l < "$dir/local.txt")" -eq $points ] || fail "local run wrote $(wc -l < "$dir/local.txt") lines"
grep -q '"failed"' "$dir/local.txt" || fail "no failed point in the study (the illegal tiles)"

case "$check" in
ranks)
  for n in 1 2 4; do
    run $n --points $points --threads 1 --output "$dir/ranks$n.txt"
    cmp "$dir/local.txt" "$dir/ranks$n.txt" || fail "$n ranks differ from the run without mpirun"
  done
  # Two threads per rank as well: threads and ranks together.
  run 2 --points $points --threads 2 --output "$dir/ranks2x2.txt"
  cmp "$dir/local.txt" "$dir/ranks2x2.txt" || fail "2 ranks x 2 threads differ"
  # Every rank given the outcomes (as the sweep's branch and bound needs): all the same.
  run 3 --points $points --threads 1 --output "$dir/all.txt" --all-ranks > "$dir/digests.txt"
  cmp "$dir/local.txt" "$dir/all.txt" || fail "--all-ranks output differs"
  [ "$(grep -c "^rank [0-2]: $points points, digest" "$dir/digests.txt")" -eq 3 ] ||
    fail "not every rank reported its outcomes: $(cat "$dir/digests.txt")"
  [ "$(awk '{print $NF}' "$dir/digests.txt" | sort -u | wc -l)" -eq 1 ] ||
    fail "ranks got different outcomes: $(cat "$dir/digests.txt")"
  ;;
resume)
  set +e
  run 4 --points $points --threads 1 --output "$dir/resumed.txt" --stop-after 20
  rc=$?
  set -e
  [ $rc -ne 0 ] || fail "the interrupted run exited with 0"
  [ ! -e "$dir/resumed.txt" ] || fail "the interrupted run wrote its output"
  before=$(($(wc -l < "$dir/resumed.txt.journal") - 1))
  [ "$before" -ge 20 ] && [ "$before" -lt $points ] || fail "journal holds $before points after the stop"
  run 2 --points $points --threads 1 --output "$dir/resumed.txt" --resume
  cmp "$dir/local.txt" "$dir/resumed.txt" || fail "resumed output differs from an uninterrupted run"
  after=$(($(wc -l < "$dir/resumed.txt.journal") - 1))
  [ "$after" -eq $points ] || fail "journal holds $after entries for $points points (points redone?)"
  # Resuming a finished run evaluates nothing and writes the same output again.
  run 2 --points $points --threads 1 --output "$dir/resumed.txt" --resume
  cmp "$dir/local.txt" "$dir/resumed.txt" || fail "second resume changed the output"
  [ "$(($(wc -l < "$dir/resumed.txt.journal") - 1))" -eq $points ] || fail "second resume redid points"
  ;;
refuse)
  echo "user data" > "$dir/mine.txt"
  set +e
  run 2 --points $points --threads 1 --output "$dir/mine.txt" 2> "$dir/err.txt"
  rc=$?
  set -e
  [ $rc -eq 2 ] || fail "overwriting an existing output exited with $rc, not 2"
  grep -q "mine.txt exists" "$dir/err.txt" || fail "the error does not name the file: $(cat "$dir/err.txt")"
  [ "$(cat "$dir/mine.txt")" = "user data" ] || fail "the existing output was changed"
  run 2 --points $points --threads 1 --output "$dir/mine.txt" --force
  cmp "$dir/local.txt" "$dir/mine.txt" || fail "--force did not write the study"
  ;;
*) fail "unknown check $check" ;;
esac
echo "ok: $check"
