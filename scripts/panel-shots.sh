#!/usr/bin/env bash
# Screenshots of every panel and window at 1600×1000, one PNG each, for comparing two builds:
#   scripts/panel-shots.sh build-old/bin/attention-lab /tmp/old
#   scripts/panel-shots.sh build/bin/attention-lab /tmp/new
#   for f in /tmp/old/*.png; do echo "$(basename $f) $(compare -metric AE $f /tmp/new/$(basename $f) null: 2>&1)"; done
# Windows that train or time something live (seq2seq-live, lm-train, scores) draw what the
# machine measured, so they differ between any two runs; the rest should match to the pixel.
set -uo pipefail
bin=$1 out=$2
mkdir -p "$out"
shot() {  # NAME ARGS...
  local name=$1
  shift
  xvfb-run -a -s "-screen 0 1600x1000x24" "$bin" gui --size 1600x1000 --no-animation "$@" \
    --screenshot "$out/$name.png" --frames 5 >"$out/$name.log" 2>&1 || echo "$name: exit $?"
}
for st in qkv scores scaled masked weights output; do
  shot "fear-$st" --example fear-is-the --step "$st" --select 1,0
done
shot multi-concat --example multi-head --step concat --select 1
shot multi-projected --example multi-head --step projected --select 1
shot multi-inputs --example multi-head --tab inputs
shot gqa-variants --example gqa --step weights --head 3 --tab variants
shot cross --example cross-attention --step weights --select 2,1
shot padding --example padding --step masked
shot sliding --example sliding-window --step weights
shot additive --example additive --step scores --select 0,1
shot linformer --example linformer --step weights
shot multi-token --example multi-token --step masked
shot head-mixing --example head-mixing --step weights
shot variant-views --example multi-token --tab variant-views
shot variant-views-mix --example head-mixing --tab variant-views
shot flash --example fear-is-the --step weights --select 2 --tab flash
shot sqrt-dk --example fear-is-the --tab sqrt-dk
shot ghost --example fear-is-the --tab ghost
shot predict --example fear-is-the --step weights --select 2,1 --predict value --guess 0.3
shot presentation --example fear-is-the --step weights --select 1,0 --presentation
shot lesson --lesson 05-fear-is-by-hand --lesson-step 3
shot seq2seq --seq2seq-model bahdanau
for tab in lm-heads lm-block lm-next lm-roles lm-circuit lm-kv lm-rollout; do
  shot "$tab" --model induction --text "the cat sat on the mat. the cat sat on the mat." --tab "$tab"
done
