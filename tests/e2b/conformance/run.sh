#!/usr/bin/env bash
# tests/e2b/conformance/run.sh: `make e2b-conformance`. E2B's own JS SDK
# tests (e2b-dev/E2B, packages/js-sdk/tests) and @e2b/desktop's
# (e2b-dev/desktop, packages/js-sdk/tests), at the commits pinned below,
# run one file at a time against a Vitrine gateway whose E2B default
# template is a desktop template; prints passed/failed/skipped per file and
# the files not run with why (needs.txt). Not part of the suite (the tests
# are not in the tree). Nothing of them is kept in the tree: the sources
# and their npm packages go to a cache outside it.
#
#   CACHE      VITRINE_E2B_CACHE, default /var/cache/vitrine-e2b
#   sources    git over https from GitHub into CACHE/NAME.git (once); or,
#              where GitHub is out of reach, E2B_GIT_DIR / DESKTOP_GIT_DIR:
#              any git directory holding the pinned commit
#   packages   the SDK's own dependencies and vitest from the npm registry
#              (npm install into the cache's copy)
#   template   VITRINE_E2B_TEMPLATE (default e2b-conformance-desktop) on
#              VITRINE_HOME, made from the desktop image at 1024x768 when
#              missing (a desktop boot: minutes under TCG)
#   --only P   runs only the files whose path contains P (repeatable)
#   SUITES     "e2b desktop" (default), or one of them
set -euo pipefail

E2B_PIN=b8029973aa7da5f741f7bb1a9f833b38a0885438
DESKTOP_PIN=30b8dfc327995c455dad59416d61d4f327b12fd8

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cache=${VITRINE_E2B_CACHE:-/var/cache/vitrine-e2b}
bin=${VITRINE_BIN:-$root/build/vitrine}
template=${VITRINE_E2B_TEMPLATE:-e2b-conformance-desktop}
suites=${SUITES:-e2b desktop}
only=()
while [ $# -gt 0 ]; do
	case "$1" in
	--only) only+=("$2"); shift 2 ;;
	*) echo "usage: $0 [--only PATTERN]..." >&2; exit 2 ;;
	esac
done
node=$("$root/deploy/node.sh")
export PATH="$(dirname "$node"):$PATH"
mkdir -p "$cache"

# source NAME PIN GITDIR: CACHE/NAME-PIN, the pinned commit's
# packages/js-sdk, extracted once.
source_of() {
	local name=$1 pin=$2 gitdir=$3 dest="$cache/$1-$2"
	if [ ! -d "$dest/packages/js-sdk" ]; then
		if [ -z "$gitdir" ]; then
			gitdir="$cache/$name.git"
			[ -d "$gitdir" ] || git init -q --bare "$gitdir"
			git --git-dir="$gitdir" cat-file -e "$pin^{commit}" 2>/dev/null ||
				git --git-dir="$gitdir" fetch -q --depth 1 "https://github.com/e2b-dev/$name" "$pin" ||
				{ echo "e2b-conformance: $name $pin: not fetched from GitHub; name a git directory that holds it (E2B_GIT_DIR, DESKTOP_GIT_DIR)" >&2; return 1; }
		fi
		mkdir -p "$dest.tmp"
		git --git-dir="$gitdir" archive "$pin" packages/js-sdk | tar -x -C "$dest.tmp"
		mv "$dest.tmp" "$dest"
	fi
	echo "$dest/packages/js-sdk"
}

# deps DIR: the package's dependencies and, of its dev tools, vitest and
# what its sources and tests import (not its bundlers, browsers,
# Cloudflare), installed into DIR; again when that list changes.
deps() {
	local dir=$1 want
	want=$(node - "$dir" <<'JS'
const fs = require('fs');
const dir = process.argv[2];
const orig = fs.existsSync(`${dir}/package.json.orig`) ? `${dir}/package.json.orig` : `${dir}/package.json`;
const pkg = JSON.parse(fs.readFileSync(orig, 'utf8'));
const keep = ['vitest', 'dotenv', 'msw', '@types/node', 'error-stack-parser-es'];
const dev = Object.fromEntries(Object.entries(pkg.devDependencies || {}).filter(([k]) => keep.includes(k)));
if (!dev.vitest) dev.vitest = '^3';
if (!dev.dotenv) dev.dotenv = '^16';
if (!fs.existsSync(`${dir}/package.json.orig`)) fs.renameSync(`${dir}/package.json`, `${dir}/package.json.orig`);
fs.writeFileSync(`${dir}/package.json`, JSON.stringify({ ...pkg, scripts: {}, devDependencies: dev,
  optionalDependencies: {}, dependencies: Object.fromEntries(Object.entries(pkg.dependencies || {})
    .filter(([, v]) => !String(v).startsWith('workspace:'))) }, null, 2));
console.log(JSON.stringify(dev));
JS
)
	[ "$(cat "$dir/.vitrine-deps" 2>/dev/null)" = "$want" ] && return 0
	(cd "$dir" && npm install --no-audit --no-fund --loglevel=error) >&2
	echo "$want" > "$dir/.vitrine-deps"
}

# The vitest configuration of a run (node, one file at a time).
config_of() {
	cat > "$1/vitest.vitrine.config.mjs" <<'JS'
import { defineConfig } from 'vitest/config';
export default defineConfig({ test: {
  include: ['tests/**/*.test.ts'], environment: 'node', globals: false, isolate: true,
  fileParallelism: false, testTimeout: 180_000, hookTimeout: 300_000, bail: 0,
  setupFiles: process.env.VITRINE_SETUP ? [process.env.VITRINE_SETUP] : [],
  deps: { interopDefault: true },
} });
JS
}

# A gateway of our own: its run dir, records and key under a fresh
# temporary dir; its sandboxes go with it (--on-stop kill).
work=$(mktemp -d /tmp/vitrine-e2b-conformance.XXXXXX)
gw_pid=
cleanup() {
	[ -n "$gw_pid" ] && kill "$gw_pid" 2>/dev/null && wait "$gw_pid" 2>/dev/null || true
	case "$work" in /tmp/vitrine-e2b-conformance.*) rm -rf -- "$work" ;; esac
}
trap cleanup EXIT
key="e2b_$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')"
(umask 077 && echo "$key" > "$work/key")
port=${VITRINE_CONFORMANCE_PORT:-18493}
base="http://127.0.0.1:$port"
VITRINE_RUN="$work/run" "$bin" serve --listen "127.0.0.1:$port" --api-key-file "$work/key" \
	--state-dir "$work/state" --on-stop kill --e2b-default-template "$template" \
	>"$work/gateway.log" 2>&1 &
gw_pid=$!
for _ in $(seq 100); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.2; done
curl -sf "$base/healthz" >/dev/null || { cat "$work/gateway.log" >&2; exit 1; }

# The desktop template, made once.
if ! curl -sf -H "Authorization: Bearer $key" "$base/v1/templates/$template" | grep -q '"ready"'; then
	echo "e2b-conformance: making the template $template from the desktop image (1024x768)"
	curl -sf -X POST -H "Authorization: Bearer $key" "$base/v1/templates" \
		-d "{\"name\": \"$template\", \"image\": \"desktop\", \"width\": 1024, \"height\": 768}" >/dev/null
	for _ in $(seq 1200); do
		st=$(curl -sf -H "Authorization: Bearer $key" "$base/v1/templates/$template" | sed -n 's/.*"status": *"\([a-z]*\)".*/\1/p')
		[ "$st" = ready ] && break
		[ "$st" = failed ] && { echo "e2b-conformance: the template failed" >&2; exit 1; }
		sleep 1
	done
fi

export E2B_API_URL=$base E2B_SANDBOX_URL=$base E2B_API_KEY=$key E2B_DOMAIN=vitrine.test
total_pass=0 total_fail=0 total_skip=0
printf '%-7s %-7s %-7s %s\n' passed failed skipped file
for suite in $suites; do
	case "$suite" in
	e2b) dir=$(source_of E2B "$E2B_PIN" "${E2B_GIT_DIR:-}") ;;
	desktop) dir=$(source_of desktop "$DESKTOP_PIN" "${DESKTOP_GIT_DIR:-}") ;;
	*) echo "unknown suite $suite" >&2; exit 2 ;;
	esac
	deps "$dir"
	config_of "$dir"
	setup=
	[ -f "$dir/tests/globalFetchFallback.setup.ts" ] && setup="$dir/tests/globalFetchFallback.setup.ts"
	for f in $(cd "$dir" && find tests -name '*.test.ts' | sort); do
		skip=
		while read -r s p; do
			[ "$s" = "$suite" ] || continue
			case "$f" in "$p"*) skip=1 ;; esac
		done < <(grep -v '^#' "$here/needs.txt" | cut -f1)
		[ -n "$skip" ] && continue
		if [ ${#only[@]} -gt 0 ]; then
			hit=
			for p in "${only[@]}"; do case "$suite/$f" in *"$p"*) hit=1 ;; esac; done
			[ -n "$hit" ] || continue
		fi
		out="$work/result.json"
		rm -f "$out"
		# A file that mocks E2B's API with msw talks to no gateway: it runs
		# with E2B's default URLs, which its mocks answer.
		unset_env=()
		grep -q "from 'msw" "$dir/$f" && unset_env=(-u E2B_API_URL -u E2B_SANDBOX_URL -u E2B_DOMAIN)
		(cd "$dir" && env "${unset_env[@]}" VITRINE_SETUP=$setup timeout 1800 nice -n 19 npx vitest run \
			--config vitest.vitrine.config.mjs --reporter=json --outputFile="$out" "$f" \
			>"$work/vitest.log" 2>&1) || true
		read -r p fl sk < <(node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
console.log(r.numPassedTests, r.numFailedTests + (r.numFailedTestSuites && !r.numFailedTests ? 1 : 0), r.numPendingTests + (r.numTodoTests || 0));
' "$out" 2>/dev/null || echo "0 1 0")
		printf '%-7s %-7s %-7s %s\n' "$p" "$fl" "$sk" "$suite/$f"
		if [ "$fl" != 0 ]; then
			node -e '
try {
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
for (const t of r.testResults) { if (t.message) console.log("        (file) " + t.message.split("\n")[0].slice(0, 200));
  for (const a of t.assertionResults) if (a.status === "failed")
    console.log("        " + a.fullName + ": " + String(a.failureMessages[0] || "").split("\n")[0].slice(0, 200)); }
} catch { console.log("        no result: " + require("fs").readFileSync(process.argv[2], "utf8").split("\n").slice(-3).join(" | ").slice(0, 300)); }
' "$out" "$work/vitest.log"
		fi
		total_pass=$((total_pass + p)) total_fail=$((total_fail + fl)) total_skip=$((total_skip + sk))
	done
done
printf '%-7s %-7s %-7s %s\n' "$total_pass" "$total_fail" "$total_skip" "(all)"
echo
echo "not run (needs.txt):"
grep -v '^#' "$here/needs.txt" | while IFS=$'\t' read -r what why; do printf '  %-50s %s\n' "$what" "$why"; done
