#!/usr/bin/env bash
# tests/run.sh [unit|integration|e2e|fuzz|all]: builds what the chosen suites
# need (binaries, the sanitizer build, guest images, fuzzers), runs every test
# binary in its own process with a time limit, first from the normal build,
# then from the ASan+UBSan build, runs each fuzz target for a bounded time,
# checks that no QEMU and no run dir outlived the tests, and ends with one
# line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

suite=${1:-all}
case $suite in unit | integration | e2e | fuzz | all) ;; *)
	echo "usage: $0 [unit|integration|e2e|fuzz|all]" >&2
	exit 2
	;;
esac

export VITRINE_HOME=${VITRINE_HOME:-/var/lib/vitrine}
# Tests get their own run base, so the hygiene check below sees only theirs.
export VITRINE_RUN=${VITRINE_RUN:-/tmp/vitrine-test-run}
rm -rf "$VITRINE_RUN"
mkdir -p "$VITRINE_RUN"

# Guests and supervisors already running when the suite starts are not its
# own (another checkout's, a person's gateway): the hygiene check at the end
# neither counts nor kills them. CI starts with none.
preexisting=" $(pgrep -f 'qemu-system-x86_64 -name vitrine-|vitrine shim --run-dir' | tr '\n' ' ')"

passed=0
failed=0
failures=()
# why_failed WHAT LINES: keeps a failure's telling lines (at most 6) for the
# summary at the end, which is all of the output a CI page may show.
why=()
why_failed() {
	local lines
	lines=$(printf '%s\n' "$2" | grep -v '^$' | head -6 | cut -c1-300)
	why+=("$1:" "$(printf '%s\n' "${lines:-(no failure line; see its output above)}" | sed 's/^/    /')")
}

# step NAME: starts a step; the one before it gets its time printed and
# kept, and the slowest steps are listed at the end (to keep CI's time in
# view as tests are added).
step_name=
step_start=$SECONDS
step_times=()
step_end() {
	[ -n "$step_name" ] || return 0
	local t=$((SECONDS - step_start))
	printf '    (%d s)\n' "$t"
	step_times+=("$t $step_name")
}
step() {
	step_end
	step_name=$*
	step_start=$SECONDS
	printf '\n=== %s\n' "$*"
}

step "build"
make -j"$(nproc)" all >/dev/null && make -j"$(nproc)" SAN=1 all >/dev/null || {
	echo "build failed"
	echo "0 passed, 1 failed"
	exit 1
}

want() { [ "$suite" = all ] || [ "$suite" = "$1" ]; }

# The desktop template the e2e tests share (tests/lib/e2e_template.h): the
# first that needs it makes it, the rest restore from it; made afresh each
# run (an image rebuilt since would make the old one stale).
export VITRINE_E2E_TEMPLATE=${VITRINE_E2E_TEMPLATE:-e2e-shared-desktop}
rm -rf "${VITRINE_HOME:?}/templates/$VITRINE_E2E_TEMPLATE"
if want integration || want e2e; then
	step "guest images"
	images=(tiny)
	want e2e && images+=(desktop)
	guest-images/build.sh "${images[@]}" || {
		echo "image build failed"
		echo "0 passed, 1 failed"
		exit 1
	}
fi

# run_binary BUILD_DIR TEST: runs one cmocka binary, adds its counts.
run_binary() {
	local dir=$1 t=$2 out p f limit=600
	[ "${t#e2e/}" != "$t" ] && limit=900
	out=$(VITRINE_BIN=$dir/vitrine ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		timeout --kill-after=10 $limit "$dir/tests/$t" 2>&1)
	local rc=$?
	printf '%s\n' "$out" | sed 's/^/    /'
	p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	p=${p:-0}
	f=${f:-0}
	# cmocka reports a failed group setup or teardown (a leak found at the
	# gateway's exit, say) with this line and may still exit 0.
	if printf '%s\n' "$out" | grep -q '^\[  FAILED  \] GROUP'; then
		f=$((f + 1))
		echo "    !! $dir/tests/$t: a group setup or teardown failed"
	fi
	# A crash, a sanitizer report or a timeout fails the binary even if
	# its tests had passed.
	if [ $rc -ne 0 ] && [ "$f" = 0 ]; then
		f=1
		echo "    !! $dir/tests/$t exited with status $rc"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	[ "$f" = 0 ] || {
		failures+=("$dir/tests/$t")
		why_failed "$dir/tests/$t" "$(printf '%s\n' "$out" |
			grep -E '^\[ +(ERROR|LINE|FAILED) +\]|runtime error|ERROR: AddressSanitizer|^SUMMARY|!!|"status":"failed"' |
			grep -v '^\[  FAILED  \] [0-9]* test' )"
	}
}

# The gateway's rooms keep to docs/architecture.md (no room cycle, no
# arrow the rules do not allow), and the tree is as clang-format (with the
# repo's .clang-format) leaves it.
if want unit; then
	step "gateway rooms: tests/rooms.py"
	if python3 tests/rooms.py | sed 's/^/    /'; [ "${PIPESTATUS[0]}" = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failures+=("gateway rooms")
	fi
	step "format: make format-check"
	if make -s format-check >/dev/null 2>&1; then
		passed=$((passed + 1))
	else
		make -s format-check 2>&1 | head -20 | sed 's/^/    /'
		failed=$((failed + 1))
		failures+=("format-check")
	fi
fi

for dir in build build-san; do
	for kind in unit integration e2e; do
		want "$kind" || continue
		for bin in "$dir"/tests/"$kind"/test_*; do
			[ -x "$bin" ] || continue
			step "$dir: ${bin#"$dir"/tests/}"
			run_binary "$dir" "${bin#"$dir"/tests/}"
		done
	done
done

if want integration; then
	for dir in build build-san; do
		step "$dir: clients/test_python_client.py"
		out=$(VITRINE_BIN=$dir/vitrine PYTHONDONTWRITEBYTECODE=1 timeout --kill-after=10 600 \
			python3 -m unittest discover -s tests/clients -v 2>&1)
		rc=$?
		printf '%s\n' "$out" | sed 's/^/    /'
		n=$(printf '%s\n' "$out" | sed -n 's/^Ran \([0-9]*\) test.*/\1/p' | tail -1)
		n=${n:-0}
		if [ $rc -eq 0 ] && [ "$n" -gt 0 ]; then
			passed=$((passed + n))
		else
			failed=$((failed + 1))
			failures+=("$dir: python client")
		fi
	done
fi

# web_test_deps: installs, if missing, the pinned Node (deploy/node/, unless
# VITRINE_NODE names another) and tests/web's npm packages (playwright-core,
# noVNC), both from their lockfiles as deploy/install-deps.sh does; sets
# $node to the node deploy/node.sh checked. Returns non-zero when either is
# missing.
web_test_deps() {
	if [ -z "${VITRINE_NODE:-}" ]; then
		deploy/node.sh --install 2>&1 | sed 's/^/    /' || return 1
	fi
	node=$(deploy/node.sh 2>&1) || {
		printf '    %s\n' "$node"
		return 1
	}
	echo "    $node: $("$node" --version)"
	deploy/npm-deps.sh tests/web | sed 's/^/    /'
	[ "${PIPESTATUS[0]}" = 0 ]
}

# node_tests DIR WHAT NAME LIMIT: runs tests/DIR/*.test.mjs (WHAT they
# drive, for the step's title) on $node against each build's gateway
# (VITRINE_BIN), within LIMIT seconds each, and adds their counts; a
# failure is listed as "BUILD: NAME". The TAP reporter, because Node >= 23 defaults to "spec" even into
# a pipe; the files by name, because Node >= 21 runs a directory given to
# --test as if it were a file.
node_tests() {
	local tdir=$1 what=$2 name=$3 limit=$4 dir out rc p f
	for dir in build build-san; do
		step "$dir: $tdir/*.test.mjs ($what)"
		out=$(VITRINE_BIN=$dir/vitrine timeout --kill-after=10 "$limit" \
			"$node" --test --test-reporter=tap "tests/$tdir"/*.test.mjs 2>&1)
		rc=$?
		printf '%s\n' "$out" | sed 's/^/    /'
		p=$(printf '%s\n' "$out" | sed -n 's/^# pass \([0-9]*\)$/\1/p' | tail -1)
		f=$(printf '%s\n' "$out" | sed -n 's/^# fail \([0-9]*\)$/\1/p' | tail -1)
		p=${p:-0}
		f=${f:-0}
		if [ $rc -ne 0 ] && [ "$f" = 0 ]; then f=1; fi
		[ "$p" -gt 0 ] || f=$((f > 0 ? f : 1))
		passed=$((passed + p))
		failed=$((failed + f))
		[ "$f" = 0 ] || {
			failures+=("$dir: $name")
			why_failed "$dir: $name" "$(printf '%s\n' "$out" | grep -E '^ *not ok|error:|Error' | grep -v '^# ')"
		}
	done
}

# Live view: the web viewer in Debian's headless Chromium via playwright-core,
# on the project's pinned Node (deploy/node.sh).
if want integration; then
	step "web viewer: Node and playwright-core"
	if web_test_deps; then
		node_tests web "headless Chromium" "web viewer" 600
	else
		echo "    no Node or no playwright-core for the web tests (see above)"
		failed=$((failed + 1))
		failures+=("web viewer deps")
	fi
fi

# E2B drop-in (docs/e2b.md): the unmodified e2b SDKs (2.51.0, and 2.45.0 for
# the v1 create path) and @e2b/desktop 2.4.0, pinned in
# tests/e2b/package-lock.json, drive a gateway on the tiny guest and on the
# desktop guest (restored from a template the desktop test makes: one boot),
# on the same pinned Node as the web tests.
if want integration; then
	step "e2b SDKs: Node and tests/e2b/node_modules"
	if web_test_deps && deploy/npm-deps.sh tests/e2b; then
		node_tests e2b "the E2B SDKs" "e2b SDKs" 540
	else
		echo "    no Node or no e2b SDK for the E2B tests (see above)"
		failed=$((failed + 1))
		failures+=("e2b SDK deps")
	fi
fi

# fuzz_one TARGET OUT: runs one target from a copy of its seeds; OUT gets
# "ok N" (inputs run) or "failed" and the log's tail.
fuzz_one() {
	local f=$1 out=$2 name=${1##*/fuzz_} corpus dict=()
	corpus=$(mktemp -d)
	cp tests/fuzz/corpus/"$name"/* "$corpus"/ 2>/dev/null
	[ ! -f tests/fuzz/dict/"$name".dict ] || dict=(-dict=tests/fuzz/dict/"$name".dict)
	if timeout 300 "$f" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 "${dict[@]}" \
		"$corpus" >"$corpus.log" 2>&1; then
		echo "ok $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$corpus.log" | grep -o '[0-9]*$')" >"$out"
	else
		{ echo failed; tail -30 "$corpus.log"; } >"$out"
	fi
	rm -rf "$corpus" "$corpus.log"
}

# The targets run nproc at a time (each is one process on one core, and
# nothing else runs by now); results are reported in name order.
if want fuzz; then
	step "fuzz targets (${FUZZ_SECONDS:=10} s each, ASan+UBSan, $(nproc) at a time)"
	if make -j"$(nproc)" fuzz >/dev/null; then
		results=$(mktemp -d)
		targets=(build/fuzz/fuzz_*)
		for f in "${targets[@]}"; do
			while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n; done
			fuzz_one "$f" "$results/${f##*/}" &
		done
		wait
		for f in "${targets[@]}"; do
			r=$results/${f##*/}
			if [ "$(head -c 3 "$r" 2>/dev/null)" = "ok " ]; then
				echo "    $f: $(cut -d' ' -f2 "$r") inputs, no failure"
				passed=$((passed + 1))
			else
				echo "    $f: failed"
				tail -n +2 "$r" 2>/dev/null | sed 's/^/    /'
				failed=$((failed + 1))
				failures+=("$f")
				why_failed "$f" "$(grep -E 'ERROR|SUMMARY|Test unit written' "$r")"
			fi
		done
		rm -rf "$results"
	else
		echo "    fuzzers did not build"
		failed=$((failed + 1))
		failures+=("fuzz build")
	fi
fi

rm -rf "$VITRINE_HOME/templates/$VITRINE_E2E_TEMPLATE"
step "hygiene: no QEMU, no guest supervisor and no run dir outlive the tests"
# ours PATTERN: the pids matching PATTERN that were not there at the start.
ours() {
	local p
	for p in $(pgrep -f "$1"); do
		case $preexisting in *" $p "*) ;; *) printf '%s ' "$p" ;; esac
	done
}
leftover=$(ours "qemu-system-x86_64 -name vitrine-")
shims=$(ours "vitrine shim --run-dir")
dirs=$(find "$VITRINE_RUN" -mindepth 1 -maxdepth 1 2>/dev/null)
if [ -n "$leftover" ] || [ -n "$shims" ] || [ -n "$dirs" ]; then
	echo "    left behind: QEMU pids [$leftover] supervisors [$shims] run dirs [$dirs]"
	# shellcheck disable=SC2086
	kill -9 $shims $leftover 2>/dev/null || true
	failed=$((failed + 1))
	failures+=("hygiene")
	why_failed hygiene "QEMU [$leftover] supervisors [$shims] run dirs [$dirs]"
else
	echo "    none"
	passed=$((passed + 1))
fi
rm -rf "$VITRINE_RUN"
step_end

printf '\nslowest steps (s), of %d s in all:\n' "$SECONDS"
printf '%s\n' "${step_times[@]}" | sort -rn | head -15 | sed 's/^/    /'

if [ ${#failures[@]} -gt 0 ]; then
	printf '\nwhy, in short:\n'
	printf '%s\n' "${why[@]}"
	printf '\nfailed: %s\n' "${failures[*]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
