#!/usr/bin/env bash
# Installs the Debian packages Attention Lab builds, runs and tests with (only what is missing).
# Exports are drawn by cairo and pango (libcairo2-dev, libpango1.0-dev) in DejaVu Sans, with
# fontconfig falling back to Noto for CJK (fonts-noto-cjk) and emoji (fonts-noto-color-emoji);
# DejaVu itself covers Latin, Greek, Cyrillic, Arabic and Hebrew. The tests read exported PDFs
# with pdftotext/pdftoppm (poppler-utils) and SVGs with rsvg-convert (librsvg2-bin). Class mode
# serves with libmicrohttpd (its tests' client is cpp-httplib) and draws its QR code with libqrencode; its tests read that code back
# with zbarimg (zbar-tools), run the student page's script in Node (nodejs), and drive the real
# page in Debian's Chromium through Selenium (chromium, chromium-driver, python3-selenium) while
# xdotool presses the teacher's keys. A lesson's web page is opened in the same Chromium and its
# screenshot read back with tesseract (tesseract-ocr, tesseract-ocr-eng).
set -euo pipefail
pkgs=(build-essential cmake pkg-config
  libimgui-dev libglfw3-dev libgl-dev libgl1-mesa-dri libglx-mesa0
  libeigen3-dev opencl-headers ocl-icd-opencl-dev pocl-opencl-icd
  libstb-dev nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libicu-dev libpcre2-dev
  libcairo2-dev libpango1.0-dev
  libmicrohttpd-dev libcpp-httplib-dev libqrencode-dev zbar-tools nodejs
  chromium chromium-driver python3-selenium xdotool tesseract-ocr tesseract-ocr-eng
  fonts-dejavu-core fonts-noto-cjk fonts-noto-color-emoji
  poppler-utils librsvg2-bin
  xvfb xauth clang-format desktop-file-utils
  clang libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
