#!/usr/bin/env bash
# Installs the Debian packages Attention Lab builds, runs and tests with (only what is missing).
set -euo pipefail
pkgs=(build-essential cmake pkg-config
  libimgui-dev libglfw3-dev libgl-dev libgl1-mesa-dri libglx-mesa0
  libeigen3-dev opencl-headers ocl-icd-opencl-dev pocl-opencl-icd
  libstb-dev nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libicu-dev libpcre2-dev
  xvfb xauth fonts-dejavu-core clang-format desktop-file-utils)
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
