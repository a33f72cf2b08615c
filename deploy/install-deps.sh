#!/usr/bin/env bash
# deploy/install-deps.sh: installs the Debian packages Vitrine builds and runs
# with. Idempotent: when everything is present it prints one line and exits.
set -euo pipefail

packages=(
	build-essential pkg-config make git ca-certificates
	libwebsockets-dev libvncserver-dev libturbojpeg0-dev libjpeg62-turbo-dev
	libpng-dev libsdl2-dev libjansson-dev libcmocka-dev
	qemu-system-x86 qemu-utils debootstrap busybox-static linux-image-amd64
	cpio e2fsprogs kmod procps xz-utils grep
	clang libclang-rt-14-dev
	python3
	chromium xvfb x11-apps xdotool nodejs
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
# npm comes with some nodejs builds; Debian packages it apart.
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#packages[@]} packages present"
else
	[ "$(id -u)" = 0 ] || { echo "install-deps: run as root to install: ${missing[*]}" >&2; exit 1; }
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

# QEMU drops to this user after start-up (-runas): the guest never runs as root.
if ! id vitrine-qemu >/dev/null 2>&1; then
	[ "$(id -u)" = 0 ] && useradd --system --no-create-home --shell /usr/sbin/nologin vitrine-qemu
fi

# The web viewer's browser tests drive Chromium with playwright-core, pinned
# in tests/web/package-lock.json and installed next to them (never committed).
web_tests="$(dirname "$0")/../tests/web"
if [ ! -d "$web_tests/node_modules/playwright-core" ] && [ -f "$web_tests/package-lock.json" ]; then
	(cd "$web_tests" && npm ci --no-audit --no-fund --loglevel=error)
fi
