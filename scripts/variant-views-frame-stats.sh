#!/usr/bin/env bash
# Measures the variant views window's frame time at 3 and at N tokens (default 2048), with the
# key–query convolution and head mixing, then Linformer and head mixing: the long ones should take
# at most twice the short ones (docs/app.md). Usage: scripts/variant-views-frame-stats.sh
# [BINARY] [N] [FRAMES]; runs under xvfb-run when there is no display.
set -euo pipefail
bin=${1:-build/bin/attention-lab}
n=${2:-2048}
frames=${3:-60}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
here=$(dirname "$0")
for t in 3 "$n"; do
  python3 "$here/make-long-scenario.py" --tokens "$t" --heads 2 --kq-conv --head-mix \
    --out "$dir/conv$t.json"
  python3 "$here/make-long-scenario.py" --tokens "$t" --heads 2 --head-mix \
    --linformer "$((t < 64 ? 2 : 64))" --out "$dir/linformer$t.json"
done
run=()
[ -n "${DISPLAY:-}" ] || run=(xvfb-run -a -s "-screen 0 1600x1000x24")
for kind in conv linformer; do
  for t in 3 "$n"; do
    printf '%-10s %5s tokens: ' "$kind" "$t"
    "${run[@]}" "$bin" gui --scenario "$dir/$kind$t.json" --tab variant-views --size 1600x1000 \
      --frames "$frames" --frame-stats
  done
done
