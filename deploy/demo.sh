#!/usr/bin/env bash
# deploy/demo.sh: the README's first command after the packages: build, build
# the guest images (cached), boot the demo desktop session and save what its
# screen shows.
set -euo pipefail
cd "$(dirname "$0")/.."
make -j"$(nproc)" build/vitrine
guest-images/build.sh tiny desktop
out=${VITRINE_HOME:-/var/lib/vitrine}/demo.png
build/vitrine boot --image desktop --page web/demo.html --screenshot "$out" "$@"
echo "demo: the desktop guest booted to Chromium; its screen is in $out"
