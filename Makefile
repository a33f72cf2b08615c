# Vitrine: one non-recursive Makefile. `make` builds the daemon/CLI and the
# tests; `make SAN=1` builds the same into build-san/ with ASan+UBSan.

SAN ?= 0
ifeq ($(SAN),1)
O := build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
O := build
SANFLAGS :=
endif

CC ?= cc
# xkbcommon: keyboard layouts' keymaps (vmm-qemu/keymap.c).
PKGS := jansson libwebsockets xkbcommon
# The screen mirror: libvncclient (and libvncserver for the fake server in the
# tests), TurboJPEG and libpng. libturbojpeg must come before libvncclient:
# libvncclient 0.9.14 exports its own tj* functions (built on libjpeg62) and
# the first library linked wins the symbols.
DISPLAY_PKGS := libturbojpeg libpng libvncclient libvncserver
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Wvla -I. $(SANFLAGS) \
	$(shell pkg-config --cflags $(PKGS) $(DISPLAY_PKGS))
LDFLAGS += $(SANFLAGS)
LDLIBS := $(shell pkg-config --libs $(PKGS) $(DISPLAY_PKGS)) -lpthread

COMMON_SRC := $(wildcard common/*.c)
VMM_SRC := $(wildcard vmm-qemu/*.c)
# display/view_*.c is vitrine-view (SDL2), a program of its own.
VIEW_SRC := $(wildcard display/view_*.c)
DISPLAY_SRC := $(filter-out $(VIEW_SRC),$(wildcard display/*.c))
GATEWAY_SRC := $(wildcard gateway/*/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
INTEG_SRC := $(wildcard tests/integration/test_*.c)
E2E_SRC := $(wildcard tests/e2e/test_*.c)
TESTLIB_SRC := $(wildcard tests/lib/*.c)
BENCH_SRC := $(wildcard bench/*.c)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)

# The gateway's rooms but its command line (gateway/cli/), with the parsers
# of that command line: libgateway.a.
GATEWAY_LIB_SRC := $(filter-out gateway/cli/%.c,$(GATEWAY_SRC)) gateway/cli/serve_config.c \
	gateway/cli/cmd_opts.c

obj = $(patsubst %.c,$(O)/obj/%.o,$(1))
LIBS := $(O)/libgateway.a $(O)/libdisplay.a $(O)/libvmm.a $(O)/libcommon.a

TESTS := $(patsubst tests/%.c,$(O)/tests/%,$(UNIT_SRC) $(INTEG_SRC) $(E2E_SRC))
BENCHES := $(patsubst bench/%.c,$(O)/bench/%,$(BENCH_SRC))
FUZZERS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))

.PHONY: all test-bin clean images image-tiny image-desktop test test-unit bench bench-screenshot bench-gateway bench-sessions bench-restores bench-custom-template bench-stream bench-exec bench-ports bench-input bench-e2b bench-loop bench-restart bench-isolation bench-observe bench-tenants bench-create bench-files test-large-files demo fuzz fuzz-long format format-check
all: test-bin $(BENCHES)
# What the suite runs (tests/run.sh builds it in both builds): all but the benches.
test-bin: $(O)/vitrine $(O)/vitrine-view $(O)/vitrine-agent $(TESTS)

$(O)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(O)/libcommon.a: $(call obj,$(COMMON_SRC))
	rm -f $@ && $(AR) rcs $@ $^
$(O)/libvmm.a: $(call obj,$(VMM_SRC))
	rm -f $@ && $(AR) rcs $@ $^
$(O)/libdisplay.a: $(call obj,$(DISPLAY_SRC))
	rm -f $@ && $(AR) rcs $@ $^
# The gateway's pure parts, so unit tests link them without main().
$(O)/libgateway.a: $(call obj,$(GATEWAY_LIB_SRC))
	rm -f $@ && $(AR) rcs $@ $^
$(O)/libtest.a: $(call obj,$(TESTLIB_SRC))
	rm -f $@ && $(AR) rcs $@ $^

$(O)/vitrine: $(call obj,$(filter-out $(GATEWAY_LIB_SRC),$(GATEWAY_SRC))) $(LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The native viewer of the live stream (docs/stream.md).
$(call obj,$(VIEW_SRC)): CFLAGS += $(shell pkg-config --cflags sdl2)
$(O)/vitrine-view: $(call obj,$(VIEW_SRC)) $(O)/libdisplay.a $(O)/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(shell pkg-config --libs sdl2)

# The guest agent, built for the host too: integration tests run it on a
# socket pair (the guest images build their own static copy).
# Its wire format is common/agent_proto.h, shared with vmm-qemu.
AGENT_SRC := $(wildcard guest-images/agent/*.c)
$(O)/vitrine-agent: $(AGENT_SRC) $(wildcard guest-images/agent/*.h) common/agent_proto.h
	$(CC) -O2 -g -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
		-Wmissing-prototypes -Wformat=2 -Wvla -I. $(SANFLAGS) -o $@ $(AGENT_SRC)

$(O)/tests/%: $(O)/obj/tests/%.o $(O)/libtest.a $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# cgroup.c's v2 path against a fake kernel of the test's own (no host here
# has a v2 hierarchy with controllers): its mkdir, open and rmdir wrap the
# real ones.
$(O)/tests/unit/test_cgroup_v2: LDFLAGS += -Wl,--wrap=mkdir -Wl,--wrap=open -Wl,--wrap=rmdir
# A guest swapping a directory at the moment a removal reaches it (test_rmtree.c).
$(O)/tests/unit/test_rmtree: LDFLAGS += -Wl,--wrap=unlinkat -Wl,--wrap=remove

$(O)/bench/%: $(O)/obj/bench/%.o $(O)/libtest.a $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# libFuzzer targets (clang), with ASan and UBSan; tests/run.sh runs them.
# The rooms they reach (common, vmm-qemu, display, the gateway but its
# command line) are compiled once more with clang and the fuzzer's coverage
# into build/fuzz-lib/libfuzzlib.a, which each target links.
FUZZ_LIB_SRC := $(COMMON_SRC) $(VMM_SRC) $(DISPLAY_SRC) $(GATEWAY_LIB_SRC)
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZFLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -I. $(FUZZ_SAN) \
	$(shell pkg-config --cflags $(PKGS) $(DISPLAY_PKGS))
fuzz: $(FUZZERS)
build/fuzz-lib/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<
build/fuzz-lib/libfuzzlib.a: $(patsubst %.c,build/fuzz-lib/obj/%.o,$(FUZZ_LIB_SRC))
	rm -f $@ && $(AR) rcs $@ $^
build/fuzz/%: tests/fuzz/%.c build/fuzz-lib/libfuzzlib.a
	@mkdir -p $(dir $@)
	clang $(FUZZFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

# Every fuzz target for FUZZ_SECONDS (default 600) each, one after another,
# from its seed corpus (tests/fuzz/corpus/NAME) into build/fuzz-corpus/NAME,
# which is kept between runs, with tests/fuzz/dict/NAME.dict when there is
# one (log: build/fuzz-corpus/NAME.log); a crash leaves its input in
# build/fuzz-crash/ and stops the run.
FUZZ_SECONDS ?= 600
fuzz-long: $(FUZZERS)
	@mkdir -p build/fuzz-crash
	@set -e; for f in $(FUZZERS); do \
		name=$${f##*/fuzz_}; mkdir -p build/fuzz-corpus/$$name; \
		echo "$$f: $(FUZZ_SECONDS) s"; \
		log=build/fuzz-corpus/$$name.log; dict=tests/fuzz/dict/$$name.dict; \
		[ -f $$dict ] && dict=-dict=$$dict || dict=; \
		$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $$dict \
			-artifact_prefix=build/fuzz-crash/$$name- \
			build/fuzz-corpus/$$name tests/fuzz/corpus/$$name >$$log 2>&1 || \
			{ tail -40 $$log; exit 1; }; \
		grep -E '^#[0-9]+.*DONE|^stat::number_of_executed_units' $$log; \
	done

images: image-tiny image-desktop
image-tiny:
	guest-images/build.sh tiny
image-desktop:
	guest-images/build.sh desktop

# The whole suite (docs/testing.md): tests/run.sh builds what it runs, in
# both builds, with make -j, while the guest images build beside it.
test:
	tests/run.sh

test-unit:
	tests/run.sh unit

# Cold boot of both images, median of 3, against the stock-initrd baseline.
bench: all images
	$(O)/bench/bench_boot

# Screenshot latency through the mirror against QMP screendump (tiny guest).
bench-screenshot: all image-tiny
	$(O)/bench/bench_screenshot

# The agent's latencies through the gateway on the desktop guest.
bench-gateway: all images
	$(O)/bench/bench_gateway

# Templates, pause and fork on the desktop guest (cold vs restore, memory,
# 20 sessions at once); takes ~10 minutes under TCG.
bench-sessions: all images
	$(O)/bench/bench_sessions

# Desktop sessions restored one after another from the end-to-end tests'
# template (made here unless $VITRINE_E2E_TEMPLATE names one on
# VITRINE_HOME): each restore's time to ready, first, median, p90, slowest
# and last of 20 (--runs N), each checked to show the page and no guest left
# (test_desktop_template restores 3 in a row; this was its printout of 20).
bench-restores: all images
	$(O)/bench/bench_restores

# A custom template against the base template it was made on: restore to
# ready (interleaved, 10 each), the save of a running session, export and
# import, and the disk of a chain of 3 against 3 flattened (desktop guest;
# `build/bench/bench_custom_template --image tiny` for a quick run).
bench-custom-template: all images
	$(O)/bench/bench_custom_template

# The live stream: fps to 1/10/50 viewers, CPU per viewer, glass-to-glass (desktop guest).
bench-stream: all images
	$(O)/bench/bench_stream

# A command's round trip: the gateway + vitrine-agent against qemu-ga's
# guest-exec polling (desktop guest).
bench-exec: all images
	$(O)/bench/bench_exec

# A guest's web page through the port route (tiny guest, busybox httpd):
# p50, p95 and requests/s one at a time and from 4 clients, and 1 MiB's
# throughput (docs/api.md, "Ports").
bench-ports: all images
	$(O)/bench/bench_ports

# Typing through the gateway against `xdotool type` in the guest (ASCII and
# mixed-script text: the request's time, and end to end until the page
# holds the text; what arrived), and a batch of 5 actions against 5
# requests (desktop guest).
bench-input: all images
	$(O)/bench/bench_input

# The unmodified E2B SDKs (tests/e2b's pinned e2b and @e2b/desktop) against
# the native API on desktop guests restored from a template it makes:
# create -> first command, screenshot, click, write of 100 mixed-script
# characters, commands.run('true'); and the `xdotool type --delay 75` a
# plain E2B guest would run (docs/e2b.md, "Figures").
bench-e2b: all images
	deploy/node.sh --install && deploy/npm-deps.sh tests/e2b
	VITRINE_BIN=$(O)/vitrine "$$(deploy/node.sh)" bench/bench_e2b.mjs

# Session A's screenshot latency while session B boots (slowed on
# purpose), pauses, resumes, is encoded 16 ways and is deleted (tiny guests).
bench-loop: all image-tiny
	$(O)/bench/bench_loop

# Sessions that outlive the gateway: the time from a new gateway's start
# to N sessions answering (1 and 8 tiny, 2 desktops), and what the registry's
# writes add to each state change (docs/durability.md).
bench-restart: all images
	$(O)/bench/bench_restart

# What each guest's jail costs: restore to screen with and without it
# (interleaved, same run) and QEMU's memory overhead in its cgroup (tiny
# and desktop guests; as root).
bench-isolation: all images
	$(O)/bench/bench_isolation --image tiny
	$(O)/bench/bench_isolation --image desktop --runs 5

# What metrics, audit and recording cost the agent: screenshot and action
# latency p50/p95 on gateways side by side with and without them, a
# recording's frames and bytes per minute, and each gateway's CPU over 20 s
# of a static screen and 10 s of typing (tiny guests; --image desktop by
# hand). The recording's figures were test_gateway_recording's printout.
bench-observe: all image-tiny
	$(O)/bench/bench_observe

# What projects cost: create to ready and screenshots with one project
# against one project per session, and project keys against the operator
# key (the owner check), on tiny guests (--sessions N, --rounds R).
bench-tenants: all image-tiny
	$(O)/bench/bench_tenants

# Large files: upload and download MiB/s of 100 MiB and 1 GiB through the
# gateway's files route against the same bytes through the egress proxy
# (a host HTTP server, the guest's client), and the gateway's peak RSS
# (tiny guest; --image desktop by hand); then a guest web page's
# requests/s and p50 through the port route (bench-ports' figures).
bench-files: all image-tiny
	$(O)/bench/bench_files
	$(O)/bench/bench_ports

# The files route with a 512 MiB file up and down (the suite's
# test_gateway_files moves 48 MiB: its time budget), plain build.
test-large-files: test-bin image-tiny
	VITRINE_TEST_FILE_MIB=512 build/tests/integration/test_gateway_files

# Create to ready from a template's warm pool, from a template without
# one and by cold boot, 10 each interleaved, and what a pool member holds
# (tiny guest; `build/bench/bench_create --desktop` for the desktop).
bench-create: all image-tiny
	$(O)/bench/bench_create

# Boots the demo desktop session and saves its screen (deploy/demo.sh).
demo:
	deploy/demo.sh

# clang-format 14 with the repository's .clang-format, on every tracked
# .c/.h; format-check only says which lines would change.
format:
	clang-format -i $$(git ls-files '*.c' '*.h')
format-check:
	clang-format --dry-run -Werror $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-san

# Keep the objects of tests and benches (intermediates of a chain of rules).
.SECONDARY:

-include $(shell find $(O)/obj build/fuzz-lib/obj -name '*.d' 2>/dev/null)
