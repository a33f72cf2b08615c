#!/usr/bin/env bash
# guest-images/build.sh NAME...: builds each named image into
# $VITRINE_HOME/images/NAME unless the cached one was made from the same
# recipe (this folder's lib.sh, build.sh, agent/ and NAME/, the agent's wire
# format ../common/agent_proto.h, plus the guest kernel version).
#
# A recipe is NAME/recipe.sh OUTDIR; it leaves in OUTDIR a kernel, an initrd,
# optionally a rootfs, and image.json naming them (see docs/images.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# -gt 0 ] || { echo "usage: $0 NAME..." >&2; exit 2; }
mkdir -p "$VITRINE_HOME/images"

for IMAGE_NAME in "$@"; do
	export IMAGE_NAME
	[ -x "$here/$IMAGE_NAME/recipe.sh" ] || die "no recipe $here/$IMAGE_NAME/recipe.sh"
	recipe=$( (cd "$here" && find lib.sh build.sh agent ../common/agent_proto.h "$IMAGE_NAME" -type f -print0 |
		LC_ALL=C sort -z | xargs -0 sha256sum; guest_kernel_version) |
		sha256sum | cut -c1-16)
	dest=$VITRINE_HOME/images/$IMAGE_NAME
	if [ "$(cat "$dest/recipe" 2>/dev/null)" = "$recipe" ]; then
		log "up to date ($dest, recipe $recipe)"
		continue
	fi
	work=$VITRINE_HOME/images/.build-$IMAGE_NAME
	rm -rf "$work"
	mkdir -p "$work"
	log "building into $dest (recipe $recipe)"
	start=$(date +%s)
	"$here/$IMAGE_NAME/recipe.sh" "$work"
	[ -s "$work/image.json" ] || die "recipe left no image.json"
	echo "$recipe" >"$work/recipe"
	rm -rf "$dest.old"
	[ -e "$dest" ] && mv "$dest" "$dest.old"
	mv "$work" "$dest"
	rm -rf "$dest.old"
	log "built in $(($(date +%s) - start)) s"
done
