#!/usr/bin/env bash
# guest-images/desktop/recipe.sh OUTDIR: the desktop guest (Debian bookworm
# minbase + Xorg + matchbox + Chromium), booted through a busybox initramfs of
# our own straight into a tiny init on the rootfs (no systemd, no udev).
#
# Leaves in OUTDIR: vmlinux (uncompressed ELF), initrd.img, rootfs.img (raw ext4 with ~1 GiB
# free), image.json. The Debian part (debootstrap + apt) is cached as a tar
# in $VITRINE_HOME/cache/desktop keyed on the package list and on the code
# that makes it, so a rebuild after an init-script change takes seconds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
IMAGE_NAME=${IMAGE_NAME:-desktop}

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$(mkdir -p "$1" && cd "$1" && pwd)
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot, file ownership)"

MIRROR=${VITRINE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${VITRINE_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
SUITE=bookworm
cache=$VITRINE_HOME/cache/desktop
FREE_MIB=1024 # free space left in the filesystem for the session's writes

# Everything the guest runs, installed with --no-install-recommends.
PACKAGES="
	chromium chromium-sandbox
	xserver-xorg-core xserver-xorg-input-evdev x11-xkb-utils xkb-data
	matchbox-window-manager xdotool x11-xserver-utils
	fonts-dejavu-core fonts-wqy-microhei fonts-noto-color-emoji fontconfig
	qemu-guest-agent
	python3 curl ca-certificates procps less file unzip xz-utils xclip xterm
	nodejs npm python3-pip python3-venv python3-dev git build-essential
"

# Kernel modules the initramfs loads (stay loaded after switch_root).
MODULES="$GUEST_BASE_MODULES ext4"

# build_base ROOT: debootstrap + apt into ROOT. Its text is part of the
# cache key, so editing it rebuilds the cached base.
build_base() {
	local root=$1 debs=$cache/debs
	mkdir -p "$debs"
	log "debootstrap $SUITE minbase (a few minutes on a cold cache)"
	debootstrap --variant=minbase --cache-dir="$debs" "$SUITE" "$root" "$MIRROR" |
		sed -u 's/^/  debootstrap: /' >&2

	cat >"$root/etc/apt/sources.list" <<-EOF
		deb $MIRROR $SUITE main
		deb $MIRROR $SUITE-updates main
		deb $SECURITY_MIRROR $SUITE-security main
	EOF
	# Keep docs, man pages and translations out of the image.
	cat >"$root/etc/dpkg/dpkg.cfg.d/01-vitrine-nodoc" <<-'EOF'
		path-exclude=/usr/share/doc/*
		path-include=/usr/share/doc/*/copyright
		path-exclude=/usr/share/man/*
		path-exclude=/usr/share/info/*
		path-exclude=/usr/share/locale/*
		path-include=/usr/share/locale/locale.alias
		path-exclude=/usr/share/lintian/*
		path-exclude=/usr/share/bug/*
		path-exclude=/usr/lib/chromium/locales/*
		path-include=/usr/lib/chromium/locales/en-US.pak
	EOF
	cat >"$root/etc/apt/apt.conf.d/01-vitrine" <<-'EOF'
		APT::Install-Recommends "false";
		APT::Install-Suggests "false";
		Acquire::Languages "none";
		Dpkg::Use-Pty "0";
	EOF
	# No service may start inside the build chroot.
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"

	mkdir -p "$root/var/cache/apt/archives"
	find "$debs" -maxdepth 1 -name '*.deb' -exec cp -t "$root/var/cache/apt/archives" {} +
	mount -t proc proc "$root/proc"
	proc_mount=$root/proc
	log "apt-get install ($(echo $PACKAGES | wc -w) packages + dependencies, security updates)"
	chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C apt-get -q update |
		sed -u 's/^/  apt: /' >&2
	chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C \
		apt-get -q -y dist-upgrade | sed -u 's/^/  apt: /' >&2
	# shellcheck disable=SC2086
	chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C \
		apt-get -q -y install $PACKAGES | sed -u 's/^/  apt: /' >&2
	find "$root/var/cache/apt/archives" -maxdepth 1 -name '*.deb' -exec cp -nt "$debs" {} +

	log "fontconfig cache, user, cleanup"
	chroot "$root" fc-cache -s -f >/dev/null
	chroot "$root" useradd -m -u 1000 -U -s /bin/sh vitrine
	umount "$root/proc"
	proc_mount=
	rm -f "$root/usr/sbin/policy-rc.d"
	rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* \
		"$root"/var/cache/apt/*.bin "$root"/var/log/* "$root"/var/cache/debconf/*-old
	find "$root/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete
	find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
	rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/lintian
	find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
}

# A failed base build must not leave /proc mounted in the cache folder.
proc_mount=
trap 'if [ -n "$proc_mount" ]; then umount "$proc_mount" || umount -l "$proc_mount"; fi' EXIT

# The cached base: a plain tar (untars in seconds, no decompression).
base_key=$( (echo "$SUITE $MIRROR $SECURITY_MIRROR"; echo $PACKAGES; declare -f build_base) |
	sha256sum | cut -c1-16)
base_tar=$cache/base-$base_key.tar
mkdir -p "$cache"
root=$out/rootfs
rm -rf "$root"
# Steps: build_base's three (each begins with a log line), caching it, and
# the four below.
[ -s "$base_tar" ] && steps_begin 4 || steps_begin 8
if [ ! -s "$base_tar" ]; then
	log "no cached base $base_tar: building it"
	tmp=$cache/.base-$base_key
	umount "$tmp/root/proc" 2>/dev/null || true
	rm -rf --one-file-system "$tmp"
	steps_through 3 build_base "$tmp/root"
	step "caching the base"
	log "caching base as $base_tar"
	tar -C "$tmp/root" --numeric-owner --xattrs -cf "$base_tar.part" .
	mv "$base_tar.part" "$base_tar"
	rm -rf "$tmp"
	# Older bases are of no further use.
	find "$cache" -maxdepth 1 -name 'base-*.tar' ! -name "base-$base_key.tar" -delete
fi
step "unpacking the base"
log "unpacking cached base $(basename "$base_tar")"
mkdir -p "$root"
tar -C "$root" --numeric-owner --xattrs -xf "$base_tar"

step "installing vitrine files and programs"
log "installing vitrine files"
files=$here/files
install -d -m 755 "$root/usr/local/lib/vitrine" "$root/usr/local/bin"
install -m 755 /bin/busybox "$root/usr/local/lib/vitrine/busybox"
# Applet links in a folder of their own, last on the init scripts' PATH: they
# add what minbase lacks (ip, usleep, init, killall) without shadowing Debian.
mkdir -p "$root/usr/local/lib/vitrine/bin"
for a in $(/bin/busybox --list); do
	ln -sfn ../busybox "$root/usr/local/lib/vitrine/bin/$a"
done
install -m 755 "$files/rootfs-init" "$root/usr/local/lib/vitrine/init"
install -m 755 "$files/session" "$root/usr/local/lib/vitrine/session"
install -m 755 "$files/qga" "$root/usr/local/lib/vitrine/qga"
install -m 644 "$files/xorg.conf.in" "$root/usr/local/lib/vitrine/xorg.conf.in"
install -m 644 "$files/inittab" "$root/etc/inittab"
install -m 755 "$files/shutdown" "$root/usr/sbin/shutdown"
install -m 755 "$files/vitrine-type" "$root/usr/local/bin/vitrine-type"
install -m 755 "$files/vitrine-screen" "$root/usr/local/bin/vitrine-screen"
# Vulkan validation layer: a debugging aid, 23 MB.
rm -f "$root"/usr/lib/chromium/libVkLayer_khronos_validation.so*
echo vitrine >"$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tvitrine\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
: >"$root/etc/fstab"
log "compiling vitrine-agent"
compile_agent "$root/usr/local/sbin/vitrine-agent"
# Programs run outside Chromium reach the network through the same proxy.
cat >>"$root/etc/environment" <<-'EOF'
	http_proxy=http://127.0.0.1:3128
	https_proxy=http://127.0.0.1:3128
	HTTP_PROXY=http://127.0.0.1:3128
	HTTPS_PROXY=http://127.0.0.1:3128
	no_proxy=localhost,127.0.0.1,::1
EOF
# apt also has it in its config, for runs that do not carry that environment
# (npm and pip read the variables, which every command gets).
cat >"$root/etc/apt/apt.conf.d/02-vitrine-proxy" <<-'EOF'
	Acquire::http::Proxy "http://127.0.0.1:3128";
	Acquire::https::Proxy "http://127.0.0.1:3128";
EOF
log "compiling vitrine-ready"
gcc -static -O2 -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Wvla -o "$root/usr/local/bin/vitrine-ready" \
	"$files/vitrine-ready.c"
strip "$root/usr/local/bin/vitrine-ready"

step "initramfs and kernel"
log "initramfs"
ird=$out/initramfs
rm -rf "$ird"
install_busybox "$ird"
# shellcheck disable=SC2086
collect_modules "$ird" $MODULES
mkdir -p "$ird/newroot"
mknod -m 600 "$ird/dev/console" c 5 1
mknod -m 666 "$ird/dev/null" c 1 3
install -m 755 "$files/initramfs-init" "$ird/init"
pack_initramfs "$ird" "$out/initrd.img"
rm -rf "$ird"
copy_kernel "$out/vmlinux"

used_kib=$(du -sk --apparent-size "$root" | cut -f1)
inodes=$(find "$root" | wc -l)
size_mib=$(((used_kib * 11 / 10) / 1024 + inodes * 4 / 1024 / 4 + FREE_MIB + 64))
step "rootfs.img (mkfs.ext4)"
log "rootfs.img: ${size_mib} MiB ext4 ($((used_kib / 1024)) MiB used, $inodes files)"
rm -f "$out/rootfs.img"
mkfs.ext4 -q -F -L vitrine-desktop -m 0 -N $((inodes + 65536)) -d "$root" \
	"$out/rootfs.img" "${size_mib}M"
rm -rf "$root"
steps_end

cat >"$out/image.json" <<-'EOF'
	{"name":"desktop","kernel":"vmlinux","initrd":"initrd.img","rootfs":"rootfs.img","append":"console=ttyS0 quiet loglevel=3 init_on_alloc=0 cryptomgr.notests nowatchdog"}
EOF
log "done: $(du -sh --apparent-size "$out/rootfs.img" | cut -f1) rootfs, $(du -sh "$out/initrd.img" | cut -f1) initrd"
