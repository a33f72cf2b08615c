#!/usr/bin/env bash
# guest-images/tiny/recipe.sh OUTDIR: the tiny test guest, a busybox
# initramfs whose init runs tinyfb (a static framebuffer/input test program),
# with tinymode (switches the screen to another size through DRM KMS).
. "$(dirname "$0")/../lib.sh"

out=${1:?usage: recipe.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
chmod 755 "$root" # the guest's /: mktemp made it 0700, closed to the unprivileged user

steps_begin 4
step "busybox and kernel modules"
install_busybox "$root"
# shellcheck disable=SC2086 # a word list
collect_modules "$root" $GUEST_BASE_MODULES
install -m 0755 "$here/init" "$root/init"
install -d -m 1777 "$root/tmp" # commands through the agent write here
# the desktop user's home, where commands start unless given a cwd
install -d -m 0755 "$root/home"
install -d -m 0755 -o 1000 -g 1000 "$root/home/vitrine"
step "compiling tinyfb, tinymode and vitrine-agent"
gcc -static -O2 -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Wvla -s -o "$root/bin/tinyfb" "$here/tinyfb.c"
# the kernel's DRM UAPI headers, as libdrm-dev installs them (no libdrm linked)
gcc -static -O2 -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Wvla -I /usr/include/libdrm -s \
	-o "$root/bin/tinymode" "$here/tinymode.c"
compile_agent "$root/bin/vitrine-agent"
step "initramfs"
pack_initramfs "$root" "$out/initrd.img"
step "kernel"
copy_kernel "$out/vmlinux"
steps_end

cat >"$out/image.json" <<'JSON'
{"name":"tiny","kernel":"vmlinux","initrd":"initrd.img","rootfs":null,"append":"console=ttyS0 quiet"}
JSON
