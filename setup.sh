#!/usr/bin/env bash
# gemmsim set-up for a fresh Debian 12 machine.
#
#   ./setup.sh          install what is missing, build, and predict the default example
#   ./setup.sh test     install what is missing, build, and run the test suite (ctest)
#
# Dependencies are Debian packages; the CUDA Toolkit is expected at /usr/local/cuda (it is on
# every project machine). Open MPI (libopenmpi-dev, openmpi-bin) is optional for the build: with
# it, `mpirun gemmsim sweep|study` spreads points over ranks. BUILD_DIR (default: build) and
# JOBS (default: nproc) may be set.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

mode=${1:-run}
case "$mode" in run|test) ;; *) echo "usage: $0 [test]" >&2; exit 2 ;; esac

packages=(cmake make g++ libyaml-cpp-dev libcli11-dev catch2 libboost-graph-dev
          nlohmann-json3-dev libfmt-dev python3 python3-matplotlib libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$jobs"

if [ "$mode" = test ]; then
  ctest --test-dir "$build" --output-on-failure -j "$jobs"
else
  "$build/gemmsim" --hw a100 --tiles 128x128x32
fi
