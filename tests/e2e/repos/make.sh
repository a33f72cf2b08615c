#!/usr/bin/env bash
# tests/e2e/repos/make.sh OUTDIR: the package repositories
# test_desktop_packages serves to a guest from this host, one of each kind a
# session installs from at run time: a flat apt repository with one
# architecture-independent package (built here with dpkg-deb, its Packages
# and Release written by hand, so nothing beyond dpkg is needed), a pip
# "simple" index with one pure-Python wheel (a zip made with python3), and
# an npm package tarball. Each installs something that prints
# "vitrine-hello <kind>".
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$1
rm -rf "$out"
mkdir -p "$out/apt" "$out/simple/vitrine-hello" "$out/files" "$out/npm"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# apt: vitrine-hello_1.0_all.deb with /usr/bin/vitrine-hello.
pkg=$work/deb
mkdir -p "$pkg/DEBIAN" "$pkg/usr/bin"
cat >"$pkg/DEBIAN/control" <<-'CONTROL'
	Package: vitrine-hello
	Version: 1.0
	Architecture: all
	Maintainer: Vitrine tests <tests@vitrine.invalid>
	Description: prints a greeting (a test package)
CONTROL
printf '#!/bin/sh\necho "vitrine-hello apt"\n' >"$pkg/usr/bin/vitrine-hello"
chmod 755 "$pkg/usr/bin/vitrine-hello"
dpkg-deb --root-owner-group -Zgzip --build "$pkg" "$out/apt/vitrine-hello_1.0_all.deb" >/dev/null
deb=$out/apt/vitrine-hello_1.0_all.deb
{
	dpkg-deb -f "$deb" Package Version Architecture Maintainer Description
	echo "Filename: ./vitrine-hello_1.0_all.deb"
	echo "Size: $(stat -c %s "$deb")"
	echo "SHA256: $(sha256sum "$deb" | cut -d' ' -f1)"
	echo
} >"$out/apt/Packages"
{
	echo "Origin: vitrine-tests"
	echo "Label: vitrine-tests"
	echo "Date: $(LC_ALL=C date -u '+%a, %d %b %Y %H:%M:%S UTC')"
	echo "SHA256:"
	echo " $(sha256sum "$out/apt/Packages" | cut -d' ' -f1) $(stat -c %s "$out/apt/Packages") Packages"
} >"$out/apt/Release"

# pip: vitrine_hello-1.0-py3-none-any.whl behind a simple index.
python3 - "$out" <<-'PY'
	import base64, hashlib, os, sys, zipfile
	out = sys.argv[1]
	files = {
	    "vitrine_hello/__init__.py": b'GREETING = "vitrine-hello pip"\n',
	    "vitrine_hello-1.0.dist-info/METADATA":
	        b"Metadata-Version: 2.1\nName: vitrine-hello\nVersion: 1.0\n",
	    "vitrine_hello-1.0.dist-info/WHEEL":
	        b"Wheel-Version: 1.0\nGenerator: vitrine-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
	}
	record = ""
	for name, data in files.items():
	    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
	    record += f"{name},sha256={digest},{len(data)}\n"
	record += "vitrine_hello-1.0.dist-info/RECORD,,\n"
	files["vitrine_hello-1.0.dist-info/RECORD"] = record.encode()
	wheel = os.path.join(out, "files", "vitrine_hello-1.0-py3-none-any.whl")
	with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
	    for name, data in files.items():
	        z.writestr(name, data)
	sha = hashlib.sha256(open(wheel, "rb").read()).hexdigest()
	with open(os.path.join(out, "simple", "vitrine-hello", "index.html"), "w") as f:
	    f.write('<!doctype html><html><body>'
	            f'<a href="../../files/vitrine_hello-1.0-py3-none-any.whl#sha256={sha}">'
	            'vitrine_hello-1.0-py3-none-any.whl</a></body></html>\n')
	with open(os.path.join(out, "simple", "index.html"), "w") as f:
	    f.write('<!doctype html><html><body><a href="vitrine-hello/">vitrine-hello</a></body></html>\n')
PY

# npm: vitrine-hello-1.0.0.tgz (npm's layout: everything under package/).
mkdir -p "$work/npm/package"
printf '{"name": "vitrine-hello", "version": "1.0.0", "main": "index.js"}\n' \
	>"$work/npm/package/package.json"
printf 'module.exports = "vitrine-hello npm";\n' >"$work/npm/package/index.js"
tar -C "$work/npm" --owner=0 --group=0 -czf "$out/npm/vitrine-hello-1.0.0.tgz" package
