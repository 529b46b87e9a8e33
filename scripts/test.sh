#!/usr/bin/env bash
# Installs what is missing, checks the formatting, builds, and runs every test: the release build
# (with the GUI tests under Xvfb), then the core suites again under AddressSanitizer and
# UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)

# Formatting first: a file that differs from .clang-format fails the run before the long build.
# Every tracked C++ source (a tarball without git: every one outside the build folders).
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z '*.cpp' '*.h'
else
  find . \( -name 'build*' -o -name '.git' \) -prune -o \( -name '*.cpp' -o -name '*.h' \) -print0
fi | xargs -0 clang-format --dry-run --Werror

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTN_WERROR=ON
cmake --build build -j"$jobs"
# -noreset: by default Xvfb resets when its last client leaves, and a GUI test whose app connects
# during that reset fails with "cannot open a window" (two parallel tests hit it about 1 in 12).
xvfb-run -a -s "-screen 0 1600x1000x24 -noreset" ctest --test-dir build --output-on-failure -j"$jobs"

# The sanitizer build uses clang so the same build also makes the libFuzzer targets (tests/fuzz).
# Warnings are errors in the release (GCC) build above; clang's own extra warnings are printed here
# but do not stop the sanitizer run.
CC=clang CXX=clang++ cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DATTN_SANITIZE=ON \
  -DATTN_FUZZ=ON
# Only what the sanitizer run uses: the core suites, the program and the fuzz targets.
cmake --build build-sanitize -j"$jobs" --target core-checks
# The sanitizer run covers the engine, the CLI and the loaders (label "core"); OpenCL runtimes
# and GL drivers are not built with sanitizers and report their own allocations, so the tests that
# touch OpenCL skip themselves there (ATTN_SKIP_OPENCL); the release run above executes them on PoCL.
ATTN_SKIP_OPENCL=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize --output-on-failure -j"$jobs" -L core

# Every parser fuzzed for 5 s (about 40 s in all); any crash fails CI.
# Longer runs are for a developer changing a parser: scripts/fuzz.sh build-sanitize 300.
scripts/fuzz.sh build-sanitize 5
