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

log() {
	bar_clear
	printf '[image %s] %s\n' "${IMAGE_NAME:-?}" "$*" >&2
}
die() { log "error: $*"; exit 1; }

# Progress on stderr, where everything here writes. A build is a number of
# steps: steps_begin N, then step WHAT as each begins, steps_end after the
# last. On a terminal one line at the bottom is redrawn,
#   [########............] 42% [3/7] installing packages (1m12s)
# from the steps done (and, within one, the packages apt has unpacked and
# set up); off a terminal each step ends with one plain line saying how
# long it took: [image desktop] [3/7] installing packages (1m12s).
# VITRINE_PROGRESS=bar or plain overrides the guess.
_step_i=0 _step_n=0 _step_what='' _step_t0=0 _steps_t0=0 _step_frac=0 _bar_shown=''

progress_tty() {
	case ${VITRINE_PROGRESS:-} in
	bar) return 0 ;;
	plain) return 1 ;;
	esac
	[ -t 2 ]
}

# duration S: 12s, 1m12s, 1h02m.
duration() {
	local s=$1
	if ((s >= 3600)); then
		printf '%dh%02dm' $((s / 3600)) $((s % 3600 / 60))
	elif ((s >= 60)); then
		printf '%dm%02ds' $((s / 60)) $((s % 60))
	else
		printf '%ds' "$s"
	fi
}

# progress_bar PERMILLE TEXT: redraws the bottom line of the terminal with
# a 20-cell bar PERMILLE/1000 full, its percent, and TEXT.
progress_bar() {
	local pm=$1 full empty
	((pm < 0)) && pm=0
	((pm > 1000)) && pm=1000
	printf -v full '%*s' $((pm * 20 / 1000)) ''
	printf -v empty '%*s' $((20 - pm * 20 / 1000)) ''
	printf '\r[%s%s] %3d%% %s\033[K' "${full// /#}" "${empty// /.}" $((pm / 10)) "$2" >&2
	_bar_shown=1
}

# bar_clear: the terminal's bottom line is free for a line of text.
bar_clear() {
	[ -n "$_bar_shown" ] || return 0
	printf '\r\033[K' >&2
	_bar_shown=
}

_step_draw() {
	progress_tty && ((_step_n > 0 && _step_i > 0)) || return 0
	progress_bar $((((_step_i - 1) * 1000 + _step_frac) / _step_n)) \
		"[$_step_i/$_step_n] $_step_what ($(duration $((SECONDS - _steps_t0))))"
}

# The step under way is over: off a terminal, its line with its time.
_step_done() {
	[ -n "$_step_what" ] || return 0
	progress_tty || log "[$_step_i/$_step_n] $_step_what ($(duration $((SECONDS - _step_t0))))"
	_step_what=
}

steps_begin() {
	_step_n=$1 _step_i=0 _step_what='' _steps_t0=$SECONDS
}

# step WHAT: the next step begins (the one before is over).
step() {
	_step_done
	_step_i=$((_step_i + 1)) _step_what=$* _step_t0=$SECONDS _step_frac=0
	_step_draw
}

steps_end() {
	_step_done
	bar_clear
}

# progress_lines PREFIX: copies its input's lines to stderr with PREFIX
# (above the bar on a terminal, which is redrawn after each), counting
# apt's packages ("N upgraded, M newly installed", then an "Unpacking" and
# a "Setting up" each) into how far the step is. A log line of lib.sh's
# ("[image NAME] text") begins the next step, named text; the last one
# ends with the input. Runs in a subshell: steps_through keeps the count.
progress_lines() {
	local line total=0 done=0 began=
	while IFS= read -r line; do
		case $line in
		"[image ${IMAGE_NAME:-?}] "*)
			_step_done
			bar_clear
			printf '%s\n' "$line" >&2
			step "${line#\[image * }"
			total=0 done=0 began=1
			continue
			;;
		*'Unpacking '* | *'Setting up '*) done=$((done + 1)) ;;
		esac
		if [[ $line =~ ([0-9]+)\ upgraded,\ ([0-9]+)\ newly\ installed ]]; then
			total=$(((BASH_REMATCH[1] + BASH_REMATCH[2]) * 2)) done=0
		fi
		bar_clear
		printf '%s%s\n' "$1" "$line" >&2
		((total > 0)) && _step_frac=$((done >= total ? 1000 : done * 1000 / total))
		_step_draw
	done
	[ -z "$began" ] || _step_done
	bar_clear
}

# steps_through N CMD...: runs CMD in this shell (its variables stay set)
# with its stderr through progress_lines, where each of its N log lines
# begins a step.
steps_through() {
	local n=$1
	shift
	_step_done
	bar_clear
	"$@" 2> >(progress_lines '')
	wait $!
	_step_i=$((_step_i + n))
}

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
