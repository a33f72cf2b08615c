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

passed=0
failed=0
failures=()

step() { printf '\n=== %s\n' "$*"; }

step "build"
make -j"$(nproc)" all >/dev/null && make -j"$(nproc)" SAN=1 all >/dev/null || {
	echo "build failed"
	echo "0 passed, 1 failed"
	exit 1
}

want() { [ "$suite" = all ] || [ "$suite" = "$1" ]; }
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
	[ "$f" = 0 ] || failures+=("$dir/tests/$t")
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
# VITRINE_NODE names another) and playwright-core (tests/web/node_modules),
# both from their lockfiles as deploy/install-deps.sh does; sets $node to
# the node deploy/node.sh checked. Returns non-zero when either is missing.
web_test_deps() {
	if [ -z "${VITRINE_NODE:-}" ]; then
		deploy/node.sh --install 2>&1 | sed 's/^/    /' || return 1
	fi
	node=$(deploy/node.sh 2>&1) || {
		printf '    %s\n' "$node"
		return 1
	}
	echo "    $node: $("$node" --version)"
	[ -d tests/web/node_modules/playwright-core ] ||
		(cd tests/web && npm ci --no-audit --no-fund --loglevel=error)
}

# Live view: the web viewer in Debian's headless Chromium via playwright-core,
# on the project's pinned Node (deploy/node.sh). The TAP reporter, because
# Node >= 23 defaults to "spec" even into a pipe; the files by name, because
# Node >= 21 runs a directory given to --test as if it were a file.
if want integration; then
	step "web viewer: Node and playwright-core"
	if web_test_deps; then
		for dir in build build-san; do
			step "$dir: web/*.test.mjs (headless Chromium)"
			out=$(VITRINE_BIN=$dir/vitrine timeout --kill-after=10 600 \
				"$node" --test --test-reporter=tap tests/web/*.test.mjs 2>&1)
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
			[ "$f" = 0 ] || failures+=("$dir: web viewer")
		done
	else
		echo "    no Node or no playwright-core for the web tests (see above)"
		failed=$((failed + 1))
		failures+=("web viewer deps")
	fi
fi

if want fuzz; then
	step "fuzz targets (${FUZZ_SECONDS:=20} s each, ASan+UBSan)"
	if make -j"$(nproc)" fuzz >/dev/null; then
		for f in build/fuzz/fuzz_*; do
			name=${f##*/fuzz_}
			corpus=$(mktemp -d)
			cp tests/fuzz/corpus/"$name"/* "$corpus"/ 2>/dev/null
			dict=()
			[ ! -f tests/fuzz/dict/"$name".dict ] || dict=(-dict=tests/fuzz/dict/"$name".dict)
			if timeout 300 "$f" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 "${dict[@]}" \
				"$corpus" >"$corpus.log" 2>&1; then
				echo "    $f: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$corpus.log" | grep -o '[0-9]*$') inputs, no failure"
				passed=$((passed + 1))
			else
				tail -30 "$corpus.log" | sed 's/^/    /'
				failed=$((failed + 1))
				failures+=("$f")
			fi
			rm -rf "$corpus" "$corpus.log"
		done
	else
		echo "    fuzzers did not build"
		failed=$((failed + 1))
		failures+=("fuzz build")
	fi
fi

step "hygiene: no QEMU, no guest supervisor and no run dir outlive the tests"
leftover=$(pgrep -f "qemu-system-x86_64 -name vitrine-" || true)
shims=$(pgrep -f "vitrine shim --run-dir" || true)
dirs=$(find "$VITRINE_RUN" -mindepth 1 -maxdepth 1 2>/dev/null)
if [ -n "$leftover" ] || [ -n "$shims" ] || [ -n "$dirs" ]; then
	echo "    left behind: QEMU pids [$leftover] supervisors [$shims] run dirs [$dirs]"
	pkill -9 -f "vitrine shim --run-dir" || true
	pkill -9 -f "qemu-system-x86_64 -name vitrine-" || true
	failed=$((failed + 1))
	failures+=("hygiene")
else
	echo "    none"
	passed=$((passed + 1))
fi
rm -rf "$VITRINE_RUN"

if [ ${#failures[@]} -gt 0 ]; then
	printf '\nfailed: %s\n' "${failures[*]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
