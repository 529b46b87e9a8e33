#!/usr/bin/env bash
# Regenerates the app icon's PNG sizes from its SVG (run after editing the SVG; the PNGs are
# committed so builds need no SVG renderer). Needs rsvg-convert (Debian package librsvg2-bin).
# Sizes are multiples of 16: the SVG is drawn on a 16-unit grid, so every edge stays sharp.
set -euo pipefail
cd "$(dirname "$0")/../assets/icons/hicolor"
for s in 16 32 48 64 128 256; do
  mkdir -p "${s}x${s}/apps"
  rsvg-convert -w "$s" -h "$s" scalable/apps/attention-lab.svg -o "${s}x${s}/apps/attention-lab.png"
done
