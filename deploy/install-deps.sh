#!/usr/bin/env bash
# deploy/install-deps.sh: installs the Debian packages Vitrine builds and runs
# with, the pinned Node.js the JavaScript tests run on (deploy/node.sh) and
# the web tests' npm packages. Idempotent: a run that finds everything
# present installs nothing. Every run ends with one line saying what is
# there; a failure ends with a sentence saying what failed, non-zero.
#
# apt-get takes minutes on a fresh machine (~600 packages, ~600 MB): on a
# terminal it shows its own progress; into a log (CI) it prints a line
# whenever the download or the install moves on by 10%, and at least every
# 10 seconds, with apt's full output kept aside and shown when it fails.
set -euo pipefail

# Paths print from the checkout's top (tests/web, not deploy/../tests/web).
cd "$(dirname "$0")/.."

packages=(
	build-essential pkg-config make git ca-certificates
	libwebsockets-dev libvncserver-dev libturbojpeg0-dev libjpeg62-turbo-dev
	libpng-dev libsdl2-dev libjansson-dev libcmocka-dev libdrm-dev
	libxkbcommon-dev xkb-data
	qemu-system-x86 qemu-utils debootstrap busybox-static linux-image-amd64
	cpio e2fsprogs kmod procps xz-utils grep
	clang libclang-rt-14-dev clang-format
	python3
	# clients/python installs into a fresh venv offline: venv's pip and
	# setuptools, with Debian's wheel seen through --system-site-packages
	# (tests/clients/test_python_client.py).
	python3-venv python3-pip python3-setuptools python3-wheel
	chromium xvfb x11-apps xdotool nodejs
	prometheus
	ffmpeg
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
# Debian's nodejs (18.20 on Debian 12) is there for npm only, which installs
# the pinned Node below; npm comes with some nodejs builds, Debian packages
# it apart.
command -v npm >/dev/null 2>&1 || missing+=(npm)

# apt_progress WHAT: reads apt's status lines (APT::Status-Fd: "dlstatus:
# N:PERCENT:MESSAGE" while it downloads, "pmstatus:PACKAGE:PERCENT:MESSAGE"
# while dpkg works) and prints one whenever the percentage passes a multiple
# of 10 or 10 seconds have gone by, with the seconds since it started; when
# apt has said nothing new by then (a long postinst), a line says what it is
# still doing. Errors apt reports there print as they come. Cannot fail.
apt_progress() {
	local what=$1 line='' part phase last_phase='' step last_step=-1
	local msg='' now start last wait
	printf -v start '%(%s)T' -1
	last=$start
	while :; do
		printf -v now '%(%s)T' -1
		wait=$((last + 10 - now))
		[ "$wait" -ge 1 ] || wait=1
		if IFS= read -r -t "$wait" part; then
			line+=$part
		elif [ $? -gt 128 ]; then
			# Timed out: keep what came of a line, say what apt still does.
			line+=$part
			printf -v now '%(%s)T' -1
			if [ -n "$msg" ] && [ $((now - last)) -ge 10 ]; then
				echo "install-deps: apt-get $what: $last_phase ($((now - start))s): still busy after: $msg"
				last=$now
			fi
			continue
		else
			line+=$part
			[ -z "$line" ] || echo "install-deps: apt-get $what: $line"
			return 0
		fi
		if [[ $line =~ ^(dl|pm)status:[^:]*(:[a-z0-9]+)?:([0-9]+)(\.[0-9]*)?:(.*)$ ]]; then
			phase="download ${BASH_REMATCH[3]}%"
			[ "${BASH_REMATCH[1]}" = dl ] || phase="install ${BASH_REMATCH[3]}%"
			step=$((BASH_REMATCH[3] / 10))
			msg=${BASH_REMATCH[5]}
			printf -v now '%(%s)T' -1
			if [ "${phase%% *}" != "${last_phase%% *}" ] || [ "$step" -gt "$last_step" ] ||
				[ $((now - last)) -ge 10 ]; then
				echo "install-deps: apt-get $what: $phase ($((now - start))s): $msg"
				last_step=$step last=$now
			fi
			last_phase=$phase
		elif [[ $line =~ ^pmerror:(.*):[0-9.e+-]+:(.*)$ ]]; then
			echo "install-deps: apt-get $what: error: ${BASH_REMATCH[1]}: ${BASH_REMATCH[2]}"
		elif [[ $line != *status:* ]]; then
			echo "install-deps: apt-get $what: $line"
		fi
		line=''
	done
}

# apt_get WHAT ARGS...: runs apt-get ARGS, its progress shown (apt's own on
# a terminal, apt_progress's lines otherwise). On failure, apt's messages
# are printed with a sentence saying what failed and where its full output
# is; the return status is apt-get's.
apt_get() {
	local what=$1 rc=0 start=$SECONDS
	shift
	if [ -t 1 ]; then
		apt-get -o Dpkg::Progress-Fancy=1 "$@" || rc=$?
		[ "$rc" -eq 0 ] || echo "install-deps: apt-get $what failed (exit $rc): its messages are above" >&2
		return "$rc"
	fi
	local log
	log=$(mktemp /tmp/install-deps-apt-XXXXXX)
	# apt's status lines to the pipe, its output to the log, stderr apart.
	apt-get -q -o APT::Status-Fd=3 "$@" 3>&1 >"$log" 2>"$log.err" | apt_progress "$what" || rc=$?
	if [ "$rc" -eq 0 ]; then
		# What apt warns about still shows.
		grep '^W:' "$log.err" >&2 || true
		rm -f "$log" "$log.err"
		echo "install-deps: apt-get $what: done ($((SECONDS - start))s)"
		return 0
	fi
	{
		echo "install-deps: the last lines apt-get $what wrote:"
		tail -n 20 "$log"
		if [ -s "$log.err" ]; then
			echo "install-deps: its errors:"
			cat "$log.err"
			cat "$log.err" >>"$log"
		fi
		rm -f "$log.err"
		echo "install-deps: apt-get $what failed (exit $rc); its full output is in $log"
	} >&2
	return "$rc"
}

# plural N WORD: "1 WORD", "N WORDs".
plural() { if [ "$1" = 1 ]; then echo "1 $2"; else echo "$1 $2s"; fi; }

if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || { echo "install-deps: run as root to install: ${missing[*]}" >&2; exit 1; }
	echo "install-deps: $(plural ${#missing[@]} package) of $((${#packages[@]} + 1)) to install: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	echo "install-deps: apt-get update"
	apt_get update update || exit 1
	install=(install -y --no-install-recommends "${missing[@]}")
	# What it comes to with dependencies: the count apt will install, the
	# files and megabytes it will fetch.
	plan=$(LC_ALL=C apt-get -q "${install[@]}" --print-uris 2>&1) || {
		printf '%s\n' "$plan" >&2
		echo "install-deps: apt-get cannot install ${missing[*]}" >&2
		exit 1
	}
	new=$(printf '%s\n' "$plan" | sed -n 's/.* \([0-9]*\) newly installed.*/\1/p')
	files=$(printf '%s\n' "$plan" | grep -c "^'" || true)
	mb=$(printf '%s\n' "$plan" | awk "/^'/ { b += \$3 } END { printf \"%.0f\", b / 1e6 }")
	echo "install-deps: apt-get install: $(plural "${new:-?}" package) with dependencies, $(plural "$files" file) ($mb MB) to fetch"
	apt_get install "${install[@]}" || exit 1
	# prometheus is here for its promtool, which the tests check GET
	# /metrics with: the server it also brings is not wanted running.
	if printf '%s\n' "${missing[@]}" | grep -qx prometheus && command -v systemctl >/dev/null &&
		[ -d /run/systemd/system ]; then
		systemctl disable --now prometheus >/dev/null 2>&1 || true
	fi
fi

# Each guest's QEMU runs as a uid of its own from this range (vitrine serve
# --qemu-uids, vmm-qemu/jail.h), dropped to before exec: numeric, no passwd
# entries. The range is reserved in /etc/subuid and /etc/subgid (for
# vitrine-qemu) so that useradd never hands it out as a container's subuids;
# no user, group or other reservation may overlap it. vitrine-qemu's group
# may write template RAM files (QEMU 7.2 opens them read-write).
qemu_uids_first=900000
qemu_uids_count=1000
if [ "$(id -u)" = 0 ]; then
	id vitrine-qemu >/dev/null 2>&1 ||
		useradd --system --no-create-home --shell /usr/sbin/nologin vitrine-qemu
	last=$((qemu_uids_first + qemu_uids_count - 1))
	for db in passwd group; do
		getent "$db" | awk -F: -v a=$qemu_uids_first -v b=$last \
			'$3 >= a && $3 <= b { print "install-deps: " $1 " (" $3 ") is in the QEMU uid range"; bad = 1 }
			END { exit bad }' >&2 || exit 1
	done
	for f in /etc/subuid /etc/subgid; do
		touch "$f"
		grep -q "^vitrine-qemu:$qemu_uids_first:$qemu_uids_count\$" "$f" && continue
		awk -F: -v a=$qemu_uids_first -v b=$last \
			'$2 <= b && $2 + $3 - 1 >= a { print "install-deps: " FILENAME ": " $0 " overlaps the QEMU uid range"; bad = 1 }
			END { exit bad }' "$f" >&2 || exit 1
		echo "vitrine-qemu:$qemu_uids_first:$qemu_uids_count" >>"$f"
	done
fi

# The Node that runs the JavaScript tests: pinned in deploy/node/package-lock.json,
# installed into deploy/node/node_modules (one line when it installs), then found
# and its version checked the way every script finds it.
bash deploy/node.sh --install
node=$(bash deploy/node.sh)

# The web viewer's browser tests drive Chromium with playwright-core (and
# noVNC), pinned in tests/web/package-lock.json; the E2B drop-in's tests run
# the unmodified e2b SDKs, pinned in tests/e2b/package-lock.json. Each is
# installed next to its tests (never committed), again whenever the
# lockfile pins what node_modules does not hold.
bash deploy/npm-deps.sh tests/web
bash deploy/npm-deps.sh tests/e2b

total=$((${#packages[@]} + 1))
if [ ${#missing[@]} -eq 0 ]; then
	debs="all $total packages present"
else
	debs="$(plural ${#missing[@]} package) installed (${new:-?} with dependencies), $((total - ${#missing[@]})) present"
fi
where=deploy/node/node_modules
[ -z "${VITRINE_NODE:-}" ] || where=$node
echo "install-deps: done: $debs; Node $("$node" --version) in $where; npm packages for tests/web and tests/e2b"
