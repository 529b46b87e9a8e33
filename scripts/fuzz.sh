#!/usr/bin/env bash
# Runs every fuzz target of a build made with -DATTN_FUZZ=ON (see tests/fuzz/README.md) for a
# bounded time each, seeded with tests/fuzz/corpus/NAME, the inputs kept in
# tests/fuzz/regressions/NAME. Prints the executions per target; a crash,
# leak, timeout or memory blow-up fails with the input saved under BUILD/fuzz/NAME/crashes/.
# Usage: scripts/fuzz.sh [BUILD_DIR] [SECONDS_PER_TARGET]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-sanitize}
seconds=${2:-10}
if [[ ! -f "$build/fuzz-targets.txt" ]]; then
  echo "error: $build was not configured with -DATTN_FUZZ=ON (CC=clang CXX=clang++)" >&2
  exit 2
fi
status=0
for t in $(cat "$build/fuzz-targets.txt"); do
  work="$build/fuzz/$t"
  mkdir -p "$work/corpus" "$work/crashes"
  seeds=("tests/fuzz/corpus/$t")
  [[ -d "tests/fuzz/regressions/$t" ]] && seeds+=("tests/fuzz/regressions/$t")
  # The shipped examples and models (tens to hundreds of KB each) are not seeds here: a short run
  # spends its whole budget reading them (27 executions in 3 s instead of 863). A long run by hand
  # can add them: build/bin/fuzz_seq2seq_model CORPUS tests/fuzz/corpus/seq2seq_model assets/models
  log="$work/log.txt"
  # -rss_limit_mb (and the malloc limit it implies) turns "a small input allocates gigabytes"
  # into a failure; -timeout one that hangs.
  if ! ASAN_OPTIONS=detect_leaks=1 "$build/bin/fuzz_$t" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/crashes/" \
    "$work/corpus" "${seeds[@]}" >"$log" 2>&1; then
    echo "fuzz_$t: FAILED; the input is in $work/crashes/ (copy it to tests/fuzz/regressions/$t/)"
    grep -E "ERROR|==[0-9]+==|SUMMARY|invariant|Test unit written" "$log" | head -20 || true
    status=1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  units=$(ls "$work/corpus" | wc -l)
  echo "fuzz_$t: ${runs:-?} executions in ${seconds} s, ${units} inputs in its corpus"
done
exit $status
