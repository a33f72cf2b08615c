# guest-images/lib.sh: helpers shared by the image recipes (sourced, not run).
#
# Both guest images boot Debian's stock kernel with a small busybox initramfs
# of our own that insmods exactly the modules a q35 virtio guest needs. That
# skips initramfs-tools and udev, which cost most of a cold boot under TCG.

set -euo pipefail

VITRINE_HOME=${VITRINE_HOME:-/var/lib/vitrine}

# Modules every guest loads, in dependency order after collect_modules.
GUEST_BASE_MODULES="virtio_pci virtio_blk virtio_gpu virtio_input evdev
	virtio_console virtio_rng qemu_fw_cfg"

# The repository: vitrine-agent includes common/agent_proto.h, the wire
# format it shares with the host.
VITRINE_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

log() { printf '[image %s] %s\n' "${IMAGE_NAME:-?}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Prints the version string of the kernel Debian's linux-image-amd64 points at.
guest_kernel_version() {
	local dep
	dep=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null) ||
		die "linux-image-amd64 is not installed (run deploy/install-deps.sh)"
	dep=${dep%% *}
	echo "${dep#linux-image-}"
}

# copy_kernel DEST: writes the guest kernel to DEST as an uncompressed ELF
# vmlinux. QEMU boots that through the PVH entry point and the guest skips
# decompressing itself, which costs ~2 s under TCG. Falls back to the bzImage
# when the xz payload cannot be found.
copy_kernel() {
	local kv src off
	kv=$(guest_kernel_version)
	src=/boot/vmlinuz-$kv
	for off in $(LC_ALL=C grep -aboP '\xFD7zXZ\x00' "$src" | cut -d: -f1); do
		# xz stops at the stream's end and tail may die of SIGPIPE: judge xz alone.
		if xz -dc --single-stream < <(tail -c +$((off + 1)) "$src") >"$1.tmp" 2>/dev/null &&
			[ "$(od -An -tx1 -N4 "$1.tmp" | tr -d ' ')" = 7f454c46 ]; then
			mv "$1.tmp" "$1"
			return 0
		fi
	done
	rm -f "$1.tmp"
	log "warning: no xz payload in $src; using the compressed kernel"
	cp "$src" "$1"
}

# collect_modules ROOT MODULE...: copies MODULEs and their dependencies into
# ROOT/lib/modules/KV and writes ROOT/etc/vitrine-modules, one path a line in
# load order, for the init script to insmod.
collect_modules() {
	local root=$1 kv line path
	shift
	kv=$(guest_kernel_version)
	mkdir -p "$root/etc"
	: >"$root/etc/vitrine-modules"
	for m in "$@"; do
		modprobe -S "$kv" --show-depends "$m" | while read -r line; do
			case $line in
			insmod\ *) ;;
			builtin\ *) continue ;;
			*) die "modprobe: $line" ;;
			esac
			path=${line#insmod }
			path=${path%% *}
			grep -qxF "$path" "$root/etc/vitrine-modules" && continue
			mkdir -p "$root$(dirname "$path")"
			cp "$path" "$root$path"
			echo "$path" >>"$root/etc/vitrine-modules"
		done
	done
}

# compile_agent OUT: vitrine-agent (guest-images/agent), static and stripped.
# Its only file from outside that folder is common/agent_proto.h, which
# build.sh hashes into the recipe with it.
compile_agent() {
	gcc -static -O2 -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
		-Wmissing-prototypes -Wformat=2 -Wvla -I "$VITRINE_SRC" -s -o "$1" \
		"$VITRINE_SRC"/guest-images/agent/*.c
}

# install_busybox ROOT: a static busybox with its applet links in ROOT/bin.
install_busybox() {
	local root=$1
	mkdir -p "$root/bin" "$root/sbin" "$root/dev" "$root/proc" "$root/sys" "$root/tmp" "$root/run"
	cp /bin/busybox "$root/bin/busybox"
	for a in $("$root/bin/busybox" --list); do
		[ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
	done
}

# pack_initramfs ROOT OUT: an uncompressed newc cpio (no decompression under TCG).
pack_initramfs() {
	(cd "$1" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) >"$2"
}
