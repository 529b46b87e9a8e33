#!/usr/bin/env bash
# Writes Jane Austen's six novels (Debian's r-cran-janeaustenr, public-domain text) as UTF-8 text
# and splits them for training the shipped `austen` model: OUT_DIR/novels/NAME.txt (each novel
# whole), OUT_DIR/train.txt (everything but the last chapters of each novel) and
# OUT_DIR/heldout.txt (those last chapters, about 5 % of each novel, which training never sees).
# A step for making the model, not for building or testing: it installs r-base-core and
# r-cran-janeaustenr with apt-get when they are missing (as root, or through sudo).
# Usage: scripts/make-austen-corpus.sh OUT_DIR
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
out=$1
pkgs=(r-base-core r-cran-janeaustenr)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y --no-install-recommends \
    "${missing[@]}"
fi
mkdir -p "$out/novels"
# The split is made in R from the package's line vectors. A chapter starts at a line "CHAPTER I",
# "Chapter 1", … (every novel's own heading). The held-out part of a novel is its shortest run of
# last chapters holding at least 5 % of its characters. Gutenberg's _underscores_ for italics are
# dropped (they are not Austen's text), and so is the printed edition's line wrapping; the files are written as UTF-8 bytes, through temporaries
# renamed into place so an interrupted run leaves no half-written file.
OUT="$out" Rscript --vanilla - <<'R'
out <- Sys.getenv("OUT")
books <- c(sensesensibility = "Sense & Sensibility", prideprejudice = "Pride & Prejudice",
           mansfieldpark = "Mansfield Park", emma = "Emma",
           northangerabbey = "Northanger Abbey", persuasion = "Persuasion")
write_utf8 <- function(lines, path) {
  tmp <- paste0(path, ".tmp")
  text <- paste(enc2utf8(lines), collapse = "\n")
  # The printed edition's line wrapping is not the text's: a paragraph becomes one line.
  text <- gsub("([^\n])\n(?=[^\n])", "\\1 ", text, perl = TRUE)
  con <- file(tmp, open = "wb")
  writeBin(charToRaw(paste0(text, "\n")), con)
  close(con)
  if (!file.rename(tmp, path)) stop("cannot rename ", tmp, " to ", path)
}
train <- character(0)
heldout <- character(0)
for (name in names(books)) {
  e <- new.env()
  data(list = name, package = "janeaustenr", envir = e)
  lines <- e[[name]]
  lines <- gsub("_", "", enc2utf8(lines), fixed = TRUE)
  write_utf8(lines, file.path(out, "novels", paste0(name, ".txt")))
  starts <- grep("^(CHAPTER|Chapter) [0-9IVXLC]+\\.?$", lines)
  if (length(starts) < 10) stop(name, ": found only ", length(starts), " chapter headings")
  chars <- nchar(lines, type = "chars") + 1
  total <- sum(chars)
  k <- length(starts)
  while (sum(chars[starts[k]:length(lines)]) < 0.05 * total) k <- k - 1
  cut <- starts[k]
  share <- sum(chars[cut:length(lines)]) / total
  cat(sprintf("%-17s %6d lines, %2d chapters, held out: the last %d (%.1f %%)\n",
              name, length(lines), length(starts), length(starts) - k + 1, 100 * share))
  train <- c(train, lines[1:(cut - 1)], "")
  heldout <- c(heldout, lines[cut:length(lines)], "")
}
write_utf8(train, file.path(out, "train.txt"))
write_utf8(heldout, file.path(out, "heldout.txt"))
R
wc -c "$out/train.txt" "$out/heldout.txt"
