#!/usr/bin/env bash
# deploy/demo.sh: the README's main job after the packages: build, build the
# guest images (cached), and run the gateway with a demo desktop session;
# it prints how to take screenshots of it and drive it. Ctrl-C stops it all.
set -euo pipefail
cd "$(dirname "$0")/.."
make -j"$(nproc)" build/vitrine
guest-images/build.sh tiny desktop
exec build/vitrine serve --demo web/demo.html "$@"
