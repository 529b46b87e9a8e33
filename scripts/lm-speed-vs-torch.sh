#!/usr/bin/env bash
# The forward pass of a Llama-family model on 128 tokens, timed in this program and in PyTorch
# float32 in the same run (scripts/llama-torch-reference.py, the same computation written with
# torch), then this program's generation speed and peak memory. Without a folder it writes a
# random model of SmolLM2-135M's shape (BF16, 270 MB) once and reuses it.
# Needs Debian's python3-torch and python3-numpy; install libopenblas0-pthread too, or Debian's
# torch multiplies matrices with the reference BLAS (about 4 GFLOP/s) and the comparison says
# little.
# Usage: scripts/lm-speed-vs-torch.sh [BUILD_DIR] [MODEL_FOLDER]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
folder=${2:-/tmp/attention-lab-smollm2-random}
bin="$build/bin/attention-lab"
if [[ ! -f "$folder/config.json" ]]; then
  "$bin" lm init --arch llama --out "$folder"
fi
echo "== PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)'), float32 weights, 2 threads"
/usr/bin/python3 scripts/llama-torch-reference.py "$folder" --bench --tokens 128 --runs 5
echo "== attention-lab"
/usr/bin/time -f "attention-lab lm bench: %e s wall, peak resident memory %M KB" \
  "$bin" lm bench --model "$folder" --tokens 128 --runs 5
