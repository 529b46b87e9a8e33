#!/usr/bin/env bash
# Screenshots of every step of every built-in lesson in presentation mode, as a class sees it, and
# a contact sheet of them, for looking at the whole course at one projector size:
#   scripts/lesson-shots.sh build/bin/attention-lab /tmp/shots 1280x720 32
# Writes OUT/LESSON-STEP.png (two at a time) and OUT/contact-N.png (six steps a sheet).
set -uo pipefail
bin=$1 out=$2
size=${3:-1280x720} font=${4:-32}
export ATTN_DATA_DIR=${ATTN_DATA_DIR:-$(cd "$(dirname "$0")/.." && pwd)/assets}
mkdir -p "$out"
lessons_dir="$(cd "$(dirname "$0")/.." && pwd)/assets/lessons"
jobs=()
for f in "$lessons_dir"/*.json; do
  name=$(basename "$f" .json)
  steps=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['steps']))" "$f")
  for ((k = 1; k <= steps; k++)); do jobs+=("$name $k"); done
done
shot() {  # LESSON STEP
  local png="$out/${1:0:2}-$2.png"
  xvfb-run -a -s "-screen 0 ${size}x24" "$bin" gui --size "$size" --font-size "$font" \
    --presentation --no-animation --lesson "$1" --lesson-step "$2" --screenshot "$png" \
    --frames 12 >"$out/${1:0:2}-$2.log" 2>&1 || echo "$1 step $2: exit $?"
}
export -f shot
export bin out size font
printf '%s\n' "${jobs[@]}" | xargs -P 2 -L 1 bash -c 'shot "$0" "$1"'
if command -v montage >/dev/null; then
  mapfile -t pngs < <(ls "$out"/[0-9][0-9]-*.png | sort -V)
  for ((i = 0; i * 6 < ${#pngs[@]}; i++)); do
    montage -label '%t' -pointsize 20 "${pngs[@]:i*6:6}" -tile 2x3 -geometry +6+6 \
      "$out/contact-$((i + 1)).png"
  done
fi
