#!/bin/sh
# Screenshots a gemmsim Chrome trace opened in speedscope (an offline trace viewer from the
# npm registry that reads the Chrome trace event format), with headless Chromium. It shows the
# first warp track of the trace; open the trace in Perfetto (ui.perfetto.dev) or
# chrome://tracing to browse every track and the counters.
#
#   traces/render_trace_speedscope.sh trace.json out.png [SPEEDSCOPE_DIR] [WIDTHxHEIGHT]
#
# SPEEDSCOPE_DIR is an installed speedscope package (npm install speedscope), default
# ./node_modules/speedscope. Needs chromium (apt-get install chromium) and python3.
set -eu
if [ $# -lt 2 ]; then
  echo "usage: $0 TRACE.json OUT.png [SPEEDSCOPE_DIR] [WIDTHxHEIGHT]" >&2
  exit 2
fi
trace=$1
out=$2
ss=${3:-node_modules/speedscope}
size=${4:-1400x420}
command -v chromium >/dev/null 2>&1 || { echo "$0: chromium is not installed; on Debian: sudo apt-get install chromium" >&2; exit 2; }
[ -f "$trace" ] || { echo "$0: '$trace' does not exist" >&2; exit 2; }
[ -f "$ss/dist/release/index.html" ] || { echo "$0: no speedscope in '$ss' (npm install speedscope)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$dir"' EXIT
cp -r "$ss/dist/release" "$dir/app"
cp "$trace" "$dir/trace.json"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$dir" >/dev/null 2>&1 &
server=$!
sleep 1
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$dir/profile" \
  --window-size="$(echo "$size" | tr x ,)" --virtual-time-budget=10000 --screenshot="$out" \
  "http://127.0.0.1:$port/app/index.html#profileURL=http://127.0.0.1:$port/trace.json" >/dev/null 2>&1
[ -s "$out" ] || { echo "$0: chromium wrote no screenshot" >&2; exit 1; }
echo "$out"
