#!/usr/bin/env bash
# deploy/npm-ci.sh WHO DIR: runs npm ci in DIR (from its package-lock.json)
# for deploy/node.sh and deploy/npm-deps.sh; WHO starts the lines it adds.
# npm says nothing when it works. When it fails, its own messages are
# printed on stderr, then, for the two failures a new machine meets most,
# one line naming the npm setting to look at: a certificate npm does not
# trust (a proxy that re-signs HTTPS), a registry it cannot reach.
# Exit status: npm's.
set -euo pipefail
who=${1:?usage: $0 WHO DIR}
dir=${2:?usage: $0 WHO DIR}

err=$(mktemp)
trap 'rm -f "$err"' EXIT
rc=0
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >/dev/null 2>"$err" || rc=$?
cat "$err" >&2
[ "$rc" -ne 0 ] || exit 0

registry=$(npm config get registry 2>/dev/null) || registry="npm's registry"
if grep -Eq 'CERT_|_CERT|unable to verify the first certificate|self[- ]signed certificate' "$err"; then
	echo "$who: npm does not trust the certificate $registry presents; behind a proxy that re-signs HTTPS, give npm the proxy's CA: npm config set cafile /path/to/ca.pem (npm then trusts that file's CAs only), or NODE_EXTRA_CA_CERTS=/path/to/ca.pem (added to node's own)" >&2
elif grep -Eq 'ENOTFOUND|ETIMEDOUT|ECONNREFUSED|ECONNRESET|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH' "$err"; then
	echo "$who: npm cannot reach $registry; check npm config get registry, and behind a proxy npm config set https-proxy http://host:port" >&2
fi
exit "$rc"
