#!/usr/bin/env bash
# deploy/npm-deps.sh DIR: installs DIR's npm packages from its
# package-lock.json (npm ci) unless every dependency its package.json pins
# is already in DIR/node_modules at that version; says so when it installs.
# Used by deploy/install-deps.sh and tests/run.sh, so that a checkout whose
# lockfile gained or moved a package gets it without removing node_modules
# by hand. npm's errors are shown, with a hint when npm cannot reach its
# registry or trust its certificate (deploy/npm-ci.sh). Exit status: npm's,
# or 0 when nothing was needed.
set -euo pipefail
dir=${1:?usage: $0 DIR}
[ -f "$dir/package-lock.json" ] || exit 0
# Exact pins only ("1.2.3", or an alias "npm:name@1.2.3"): what the
# project's package.json files use.
if python3 - "$dir" <<'PY'; then exit 0; fi
import json, os, sys
d = sys.argv[1]
deps = json.load(open(os.path.join(d, "package.json"))).get("dependencies", {})
for name, spec in deps.items():
    want = spec.rsplit("@", 1)[-1] if spec.startswith("npm:") else spec
    try:
        got = json.load(open(os.path.join(d, "node_modules", name, "package.json")))["version"]
    except (OSError, ValueError, KeyError):
        sys.exit(1)
    if got != want:
        sys.exit(1)
PY
echo "npm-deps: installing $dir/node_modules from its package-lock.json (npm ci)"
rc=0
bash "$(dirname "$0")/npm-ci.sh" npm-deps "$dir" || rc=$?
[ "$rc" -eq 0 ] || echo "npm-deps: npm ci in $dir failed; its tests need these packages" >&2
exit "$rc"
