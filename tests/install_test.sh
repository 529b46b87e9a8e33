#!/usr/bin/env bash
# `cmake --install` into a fresh prefix, then the installed program, moved to another folder so
# nothing can point back at the build, must find its models, examples and fonts on its own;
# ATTN_DATA_DIR must override where it looks; the desktop entry must validate; the icons exist.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR VERSION BUILD_TYPE
set -euo pipefail
build=$1 source=$2 version=$3 build_type=$4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attn-install-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
mv "$tmp/prefix" "$tmp/moved"
p=$tmp/moved
bin=$p/bin/attention-lab
cd "$tmp"  # no assets/ in the working folder either
unset ATTN_DATA_DIR

for f in bin/attention-lab share/applications/attention-lab.desktop \
  share/icons/hicolor/scalable/apps/attention-lab.svg share/attention-lab/models/bahdanau.s2s \
  share/attention-lab/models/bottleneck/none-max40.s2s share/attention-lab/examples/fear-is.json \
  share/attention-lab/models/lm/stories/model.safetensors \
  share/attention-lab/models/lm/stories-llama/tokenizer.json \
  share/attention-lab/models/lm/induction-llama/tokenizer.json \
  share/attention-lab/models/lm/austen/model.safetensors \
  share/doc/attention-lab/README.md share/doc/attention-lab/docs/cli.md; do
  [[ -f $p/$f ]] || fail "not installed: $f"
done
for s in 16 32 48 64 128 256; do
  f=$p/share/icons/hicolor/${s}x${s}/apps/attention-lab.png
  [[ -f $f ]] || fail "not installed: $f"
  # PNG width and height: big-endian 32-bit at bytes 16..23
  [[ $(od -An -tu4 --endian=big -j16 -N8 "$f" | tr -s ' ') == " $s $s" ]] || fail "$f is not ${s}x${s}"
done
for f in CMakeLists.txt README.md desktop icons; do
  [[ ! -e $p/share/attention-lab/$f ]] || fail "build file installed as data: share/attention-lab/$f"
done
command -v desktop-file-validate > /dev/null || fail "desktop-file-validate missing: scripts/install-deps.sh installs desktop-file-utils"
desktop-file-validate "$p/share/applications/attention-lab.desktop" || fail "desktop-file-validate"
grep -qx 'Icon=attention-lab' "$p/share/applications/attention-lab.desktop" || fail "desktop entry names another icon"

# No path into the source or build tree is compiled in (a Debug build's asserts name source files).
if [[ $build_type == Release ]]; then
  for tree in "$source" "$build"; do
    ! grep -qF "$tree/" "$bin" || fail "the binary contains the path $tree/"
  done
fi

out=$("$bin" --version)
[[ $out == "attention-lab $version" ]] || fail "--version printed '$out', expected 'attention-lab $version'"
[[ $out =~ ^attention-lab\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "--version is not X.Y.Z: '$out'"
"$bin" examples | grep -q '^fear-is-the	' || fail "examples"
"$bin" seq2seq models | grep -q '^bottleneck/none-max40	' || fail "seq2seq models"
out=$("$bin" seq2seq translate --model bahdanau --input "nov 22 26")
grep -q '^output: 2026-11-22$' <<< "$out" || fail "translate --model bahdanau: $out"
# The shipped language model opens by short name and uses its own merges ("Ġthe" is one token).
out=$("$bin" lm tokens --model stories --text "One day the cat")
grep -q 'Ġthe$' <<< "$out" || fail "lm tokens --model stories: $out"
"$bin" lm next --model stories --text "One day Tom" --top 1 > /dev/null || fail "lm next --model stories"
"$bin" lm generate --model stories-llama --text "One day Tom" --tokens 3 > /dev/null ||
  fail "lm generate --model stories-llama"
out=$("$bin" lm next --model austen --text "She was very glad to see her sister" --top 1)
[[ -n $out ]] || fail "lm next --model austen"
"$bin" export --example fear-is-the --step weights --out "$tmp/w.png" > /dev/null || fail "export (fonts?)"
[[ $(head -c 8 "$tmp/w.png" | od -An -tx1 | tr -d ' ') == 89504e470d0a1a0a ]] || fail "export wrote no PNG"

# ATTN_DATA_DIR overrides the installed data: an empty folder has no models, and says so.
mkdir "$tmp/empty"
if out=$(ATTN_DATA_DIR=$tmp/empty "$bin" seq2seq translate --model bahdanau --input "nov 22 26" 2>&1); then
  fail "ATTN_DATA_DIR=empty still found bahdanau"
else
  [[ $? -eq 2 ]] || fail "unknown model: exit status not 2"
fi
grep -qF "$tmp/empty" <<< "$out" || fail "the error does not say where it looked: $out"
ATTN_DATA_DIR=$p/share/attention-lab "$bin" seq2seq translate --model dot --input "3.4.05" > /dev/null \
  || fail "ATTN_DATA_DIR pointing at the data"
echo "installed to $p: all checks passed"
