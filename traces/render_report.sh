#!/bin/sh
# Renders a gemmsim HTML report (or any local HTML page) to a PNG with headless Chromium, so
# the page can be checked by looking at it.
#
#   traces/render_report.sh report.html report.png [WIDTHxHEIGHT]
#
# Needs Debian's chromium package (apt-get install chromium); not needed to build or test.
set -eu
if [ $# -lt 2 ]; then
  echo "usage: $0 REPORT.html OUT.png [WIDTHxHEIGHT]" >&2
  exit 2
fi
in=$1
out=$2
size=${3:-1000x2600}
if ! command -v chromium >/dev/null 2>&1; then
  echo "$0: chromium is not installed; on Debian: sudo apt-get install chromium" >&2
  exit 2
fi
if [ ! -f "$in" ]; then
  echo "$0: '$in' does not exist" >&2
  exit 2
fi
case "$size" in
  *x*) ;;
  *) echo "$0: size '$size': expected WIDTHxHEIGHT, e.g. 1000x2600" >&2; exit 2 ;;
esac
abs=$(cd "$(dirname "$in")" && pwd)/$(basename "$in")
# A private profile directory keeps the run independent of any user profile.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
  --window-size="$(echo "$size" | tr x ,)" --screenshot="$out" "file://$abs" >/dev/null 2>&1
[ -s "$out" ] || { echo "$0: chromium wrote no screenshot" >&2; exit 1; }
echo "$out"
