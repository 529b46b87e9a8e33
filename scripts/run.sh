#!/usr/bin/env bash
# Installs what is missing, builds, and opens Attention Lab on the default example (fear-is-the).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
exec build/bin/attention-lab "$@"
