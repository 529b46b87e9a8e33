#!/usr/bin/env bash
# Builds the Debian package: a separate build folder for the portable x86-64 baseline
# (-DATTN_NATIVE=OFF, so the package runs on any x86-64, not only on CPUs like this one), then
# `cpack -G DEB`. Dependencies come from dpkg-shlibdeps plus fonts-dejavu-core (docs/install.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build-package -DCMAKE_BUILD_TYPE=Release -DATTN_NATIVE=OFF -DBUILD_TESTING=OFF
cmake --build build-package -j"$(nproc)"
(cd build-package && cpack -G DEB)
ls -1 "$PWD"/build-package/attention-lab_*.deb
