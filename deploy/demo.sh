#!/usr/bin/env bash
# deploy/demo.sh: the README's main job after the packages: build, build the
# guest images (cached), make the default template (a desktop showing
# web/demo.html, saved once it is ready; made again only when the image or
# the page changed), and run the gateway with a demo session restored from
# it; it prints how to take screenshots of it and drive it. Ctrl-C stops it
# and its session (--on-stop kill: a demo leaves nothing running; a plain
# `vitrine serve` keeps its sessions across restarts, docs/durability.md).
set -euo pipefail
cd "$(dirname "$0")/.."
make -j"$(nproc)" build/vitrine
guest-images/build.sh tiny desktop
home=${VITRINE_HOME:-/var/lib/vitrine}
stamp=$home/templates/default.page-sha256
want=$(sha256sum web/demo.html | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	build/vitrine template rm default 2>/dev/null || true
fi
echo "default template: made once (about 30 s under TCG), then reused"
build/vitrine template create default --image desktop --page web/demo.html --unless-current
echo "$want" >"$stamp"
exec build/vitrine serve --on-stop kill --demo-template default "$@"
