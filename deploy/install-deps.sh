#!/usr/bin/env bash
# deploy/install-deps.sh: installs the Debian packages Vitrine builds and runs
# with, the pinned Node.js the JavaScript tests run on (deploy/node.sh) and
# the web tests' npm packages. Idempotent: when everything is present it
# prints one line and exits.
set -euo pipefail

packages=(
	build-essential pkg-config make git ca-certificates
	libwebsockets-dev libvncserver-dev libturbojpeg0-dev libjpeg62-turbo-dev
	libpng-dev libsdl2-dev libjansson-dev libcmocka-dev libdrm-dev
	libxkbcommon-dev xkb-data
	qemu-system-x86 qemu-utils debootstrap busybox-static linux-image-amd64
	cpio e2fsprogs kmod procps xz-utils grep
	clang libclang-rt-14-dev clang-format
	python3
	chromium xvfb x11-apps xdotool nodejs
	prometheus
	ffmpeg
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
# Debian's nodejs (18.20 on Debian 12) is there for npm only, which installs
# the pinned Node below; npm comes with some nodejs builds, Debian packages
# it apart.
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || { echo "install-deps: run as root to install: ${missing[*]}" >&2; exit 1; }
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
	# prometheus is here for its promtool, which the tests check GET
	# /metrics with: the server it also brings is not wanted running.
	if printf '%s\n' "${missing[@]}" | grep -qx prometheus && command -v systemctl >/dev/null &&
		[ -d /run/systemd/system ]; then
		systemctl disable --now prometheus >/dev/null 2>&1 || true
	fi
fi

# Each guest's QEMU runs as a uid of its own from this range (vitrine serve
# --qemu-uids, vmm-qemu/jail.h), dropped to before exec: numeric, no passwd
# entries. The range is reserved in /etc/subuid and /etc/subgid (for
# vitrine-qemu) so that useradd never hands it out as a container's subuids;
# no user, group or other reservation may overlap it. vitrine-qemu's group
# may write template RAM files (QEMU 7.2 opens them read-write).
qemu_uids_first=900000
qemu_uids_count=1000
if [ "$(id -u)" = 0 ]; then
	id vitrine-qemu >/dev/null 2>&1 ||
		useradd --system --no-create-home --shell /usr/sbin/nologin vitrine-qemu
	last=$((qemu_uids_first + qemu_uids_count - 1))
	for db in passwd group; do
		getent "$db" | awk -F: -v a=$qemu_uids_first -v b=$last \
			'$3 >= a && $3 <= b { print "install-deps: " $1 " (" $3 ") is in the QEMU uid range"; bad = 1 }
			END { exit bad }' >&2 || exit 1
	done
	for f in /etc/subuid /etc/subgid; do
		touch "$f"
		grep -q "^vitrine-qemu:$qemu_uids_first:$qemu_uids_count\$" "$f" && continue
		awk -F: -v a=$qemu_uids_first -v b=$last \
			'$2 <= b && $2 + $3 - 1 >= a { print "install-deps: " FILENAME ": " $0 " overlaps the QEMU uid range"; bad = 1 }
			END { exit bad }' "$f" >&2 || exit 1
		echo "vitrine-qemu:$qemu_uids_first:$qemu_uids_count" >>"$f"
	done
fi

# The Node that runs the JavaScript tests: pinned in deploy/node/package-lock.json,
# installed into deploy/node/node_modules (one line when it installs), then found
# and its version checked the way every script finds it.
deploy=$(dirname "$0")
bash "$deploy/node.sh" --install
node=$(bash "$deploy/node.sh")

# The web viewer's browser tests drive Chromium with playwright-core (and
# noVNC), pinned in tests/web/package-lock.json; the E2B drop-in's tests run
# the unmodified e2b SDKs, pinned in tests/e2b/package-lock.json. Each is
# installed next to its tests (never committed), again whenever the
# lockfile pins what node_modules does not hold.
bash "$deploy/npm-deps.sh" "$deploy/../tests/web"
bash "$deploy/npm-deps.sh" "$deploy/../tests/e2b"

if [ ${#missing[@]} -eq 0 ]; then
	where=deploy/node/node_modules
	[ -z "${VITRINE_NODE:-}" ] || where=$node
	echo "install-deps: all ${#packages[@]} packages present; Node $("$node" --version) in $where"
fi
