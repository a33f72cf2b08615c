"""tests/runner/plan.py: which steps a suite runs, in which order, and how.

The order (docs/testing.md): checks; unit tests in the plain build, then
in the ASan+UBSan build; integration tests that boot nothing, plain; the
fuzz targets; once the tiny image is there, every integration test from the
sanitizer build (so every guest boots once, under every sanitizer check),
then the plain build's tests that keep a guest (budget flag "plain": the
smoke of the binary users run, the memory bounds that hold only without
ASan); the Python client; once the desktop image is there, the end-to-end
tests (the first makes the desktop template the rest restore from), the web
viewer's and the E2B SDKs' node files (a step each), all against the
sanitizer build's gateway.

Each test step's budget, time limit and solo flag come from tests/budget.txt
(budget.py). The compiling is separate (builds()): the runner stops when a
build fails.
"""

import fnmatch
import glob
import os
import shutil
import subprocess
import tempfile

import budget
import outcome
import schedule

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SUITES = ("unit", "integration", "e2e", "fuzz", "all")
PLAIN, SAN = "build", "build-san"
FUZZ_SECONDS = os.environ.get("FUZZ_SECONDS", "4")
# Added to the time limit of the first desktop step, which makes the shared
# desktop template (under --only, a test whose budget line does not count it).
TEMPLATE_MAKE_S = 240
SAN_ENV = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0",
           "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}


def images_for(suite):
    """The guest images a suite needs."""
    return [] if suite in ("unit", "fuzz") else ["tiny", "desktop"]


# The process groups of the commands running now (run_cmd's), for
# stop_all: the runner's own Ctrl-C does not reach them (their sessions
# are their own).
RUNNING = set()


def stop_all():
    """Kills every command run_cmd is running (the runner was interrupted)."""
    for pid in list(RUNNING):
        try:
            os.killpg(pid, 9)
        except ProcessLookupError:
            pass


def run_cmd(argv, timeout_s, env=None):
    """Runs argv in its own process group with output to a file (so that a
    guest left behind holding the output cannot hold the runner), killing
    the group at timeout_s. Returns (output, rc): rc is the exit status,
    -signal, or "timeout"."""
    full = dict(os.environ)
    full.update(env or {})
    with tempfile.TemporaryFile() as out:
        try:
            p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 env=full, cwd=REPO, start_new_session=True)
        except OSError as e:
            return "cannot run %s: %s" % (argv[0], e.strerror), 127
        RUNNING.add(p.pid)
        try:
            rc = p.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            rc = "timeout"
            for sig, grace in ((15, 10), (9, 10)):
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    p.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    pass
        finally:
            RUNNING.discard(p.pid)
        out.seek(0)
        return out.read().decode(errors="replace"), rc


# QEMU 7.2's TCG crashes now and then by itself (a vCPU thread's SIGSEGV,
# about once in a thousand boots here), which tests that boot through a
# gateway see as a failed session: such a step runs once more, saying so
# in a retry line (tests/lib/guest.c does the same for its own boots).
QEMU_CRASH = "QEMU killed by signal 11"


def run_test(argv, step, env, reader):
    """Runs a test program with reader (outcome.py) over its output, once
    more when it failed and its output shows QEMU's own crash."""
    output, rc = run_cmd(argv, step.timeout_s, env)
    result = reader(output, rc, step.timeout_s)
    if not result.failed or QEMU_CRASH not in output:
        return result
    again, rc = run_cmd(argv, step.timeout_s, env)
    result = reader(again, rc, step.timeout_s)
    result.retries.insert(0, "retry: %s: QEMU crashed (signal 11), the step ran once more" % step.name)
    result.output = "%s\n!! QEMU crashed (signal 11): the step runs once more\n%s" % (output, result.output)
    return result


def _make_step(key, *targets):
    argv = ["make", "-j%d" % (os.cpu_count() or 2)] + list(targets)

    def action(step):
        output, rc = run_cmd(argv, step.timeout_s)
        if rc == 0:
            return schedule.Result(output="")  # its lines only when it fails
        return outcome.plain("\n".join(output.splitlines()[-40:]), rc, step.timeout_s)
    return schedule.Step(" ".join(argv), "build", action, key=key, solo=True, timeout_s=3600)


def builds():
    """The compiling: both builds of the daemon and the tests (benches are
    not part of the suite: `make all` builds them)."""
    return [_make_step("build/plain", "test-bin"), _make_step("build/san", "SAN=1", "test-bin")]


def apply_budget(steps, bud):
    """Gives the steps that are not tests (builds, image waits, the Node
    step) their budget lines."""
    for s in steps:
        if s.kind in ("build", "images", "deps"):
            entry, own = bud.lookup(s.key, s.kind)
            s.budget_s, s.own = entry.seconds, own
    return steps


def _names(pattern):
    """Sorted stems of the sources matching pattern (REPO-relative)."""
    return sorted(os.path.basename(p).rsplit(".", 1)[0] for p in glob.glob(os.path.join(REPO, pattern)))


class Planner:
    """Makes steps with their budget lines; keeps what --only selects."""

    def __init__(self, bud, patterns):
        self.bud = bud
        self.patterns = patterns

    def wanted(self, key):
        return not self.patterns or any(fnmatch.fnmatch(key, p) or fnmatch.fnmatch(key.split("/")[-1], p)
                                        for p in self.patterns)

    def step(self, name, key, kind, action):
        entry, own = self.bud.lookup(key, kind)
        return schedule.Step(name, kind, action, key=key, budget_s=entry.seconds, own=own,
                             solo=entry.solo, timeout_s=budget.timeout_s(entry.seconds))

    def binary(self, build, kind, test):
        key = "%s/%s" % (kind, test)
        path = os.path.join(REPO, build, "tests", kind, test)
        env = {"VITRINE_BIN": os.path.join(build, "vitrine")}
        env.update(SAN_ENV)

        def action(step):
            if not os.access(path, os.X_OK):
                return schedule.Result(failed=1, output="no binary %s" % path, why="no binary %s" % path)
            return run_test([path], step, env, outcome.cmocka)
        return self.step("%s: %s" % (build, key), key, kind, action)


def _check(p, name, key, argv, reader=outcome.plain):
    def action(step):
        output, rc = run_cmd(argv, step.timeout_s)
        return reader(output, rc, step.timeout_s)
    return p.step(name, key, "check", action)


def _fuzz_target(p, name):
    path = os.path.join(REPO, "build", "fuzz", name)
    short = name[len("fuzz_"):]

    def action(step):
        corpus = tempfile.mkdtemp(prefix="vitrine-fuzz-")
        try:
            for seed in glob.glob(os.path.join(REPO, "tests", "fuzz", "corpus", short, "*")):
                shutil.copy(seed, corpus)
            argv = [path, "-max_total_time=" + FUZZ_SECONDS, "-print_final_stats=1"]
            d = os.path.join(REPO, "tests", "fuzz", "dict", short + ".dict")
            if os.path.exists(d):
                argv.append("-dict=" + d)
            output, rc = run_cmd(argv + [corpus], step.timeout_s)
        finally:
            shutil.rmtree(corpus, ignore_errors=True)
        if rc == 0:
            units = [l.split()[-1] for l in output.splitlines() if l.startswith("stat::number_of_executed_units")]
            return schedule.Result(passed=1, output="%s inputs, no failure" % (units[-1] if units else "?"))
        return outcome.plain("\n".join(output.splitlines()[-30:]), rc, step.timeout_s)
    return p.step("fuzz: %s (%s s)" % (name, FUZZ_SECONDS), "fuzz/" + name, "fuzz", action)


class Node:
    """The pinned Node and the npm packages of tests/web and tests/e2b,
    installed by the first step that needs them."""

    def __init__(self):
        self.path = None
        self.why = "the Node step did not run"

    def deps_step(self):
        def action(step):
            out = []
            if not os.environ.get("VITRINE_NODE"):
                o, rc = run_cmd(["deploy/node.sh", "--install"], step.timeout_s)
                out.append(o)
                if rc != 0:
                    self.why = "deploy/node.sh --install failed"
                    return outcome.plain("\n".join(out), rc)
            o, rc = run_cmd(["deploy/node.sh"], 60)
            if rc != 0:
                self.why = o.strip()
                return outcome.plain(o, rc)
            node = o.strip().splitlines()[-1]
            v, _ = run_cmd([node, "--version"], 60)
            out.append("%s: %s" % (node, v.strip()))
            for d in ("tests/web", "tests/e2b"):
                o, rc = run_cmd(["deploy/npm-deps.sh", d], step.timeout_s)
                out.append(o)
                if rc != 0:
                    self.why = "deploy/npm-deps.sh %s failed" % d
                    return outcome.plain("\n".join(out), rc)
            self.path = node
            return schedule.Result(passed=1, output="\n".join(l for l in out if l.strip()))
        return schedule.Step("node: the pinned Node, tests/web and tests/e2b npm packages", "deps", action,
                             key="deps/node", budget_s=120, solo=True, timeout_s=900)

    def test_step(self, p, kind, name):
        key = "%s/%s" % (kind, name)

        def action(step):
            if not self.path:
                return schedule.Result(failed=1, output="no Node: " + self.why, why="no Node: " + self.why)
            # TAP, because Node >= 23 defaults to "spec" even into a pipe.
            return run_test([self.path, "--test", "--test-reporter=tap", os.path.join("tests", kind, name)],
                            step, {"VITRINE_BIN": os.path.join(SAN, "vitrine")}, outcome.tap)
        return p.step("%s: %s" % (SAN, key), key, kind, action)


def _python_clients(p):
    def action(step):
        return run_test(["python3", "-m", "unittest", "discover", "-s", "tests/clients", "-v"], step,
                        {"VITRINE_BIN": os.path.join(SAN, "vitrine"), "PYTHONDONTWRITEBYTECODE": "1"},
                        outcome.unittest)
    return p.step("%s: clients/python" % SAN, "clients/python", "clients", action)


def make(suite, bud, images, patterns=()):
    """The steps of suite (see the file's comment), filtered by patterns
    (--only); images is the background ImageBuild (its wait steps)."""
    p = Planner(bud, list(patterns))
    want = lambda kind: suite == "all" or suite == kind  # noqa: E731
    unit, integ, e2e = (_names("tests/%s/test_*.c" % k) for k in ("unit", "integration", "e2e"))

    def flags(kind, t):
        return bud.lookup("%s/%s" % (kind, t), kind)[0]

    # The steps of a pass that --only keeps, those that may run two at a
    # time first (a solo step in their midst would hold up the queue: no
    # step starts beside it), the solo ones after, each in name order.
    def tests(*groups):
        kept = [s for s in groups if p.wanted(s.key)]
        return [s for s in kept if not s.solo] + [s for s in kept if s.solo]

    steps = []
    if want("unit"):
        steps += tests(_check(p, "gateway rooms: tests/rooms.py", "check/rooms", ["python3", "tests/rooms.py"]),
                       _check(p, "format: make format-check", "check/format", ["make", "-s", "format-check"]),
                       _check(p, "runner: tests/runner/test_runner.py", "check/runner",
                              ["python3", "tests/runner/test_runner.py"], outcome.unittest))
        steps += tests(*[p.binary(PLAIN, "unit", t) for t in unit])
        steps += tests(*[p.binary(SAN, "unit", t) for t in unit])
    if want("integration"):
        steps += tests(*[p.binary(PLAIN, "integration", t) for t in integ if not flags("integration", t).boots])
    if want("fuzz"):
        targets = tests(*[_fuzz_target(p, n) for n in _names("tests/fuzz/fuzz_*.c")])
        if targets:
            steps.append(_make_step("build/fuzz", "fuzz"))
            steps += targets
    if want("integration"):
        booting = tests(*[p.binary(SAN, "integration", t) for t in integ])
        booting += tests(*[p.binary(PLAIN, "integration", t) for t in integ
                           if flags("integration", t).boots and flags("integration", t).plain])
        if booting:
            steps.append(images.wait_step("tiny"))
            steps += booting
    if want("integration"):
        python = tests(_python_clients(p))
        if python and not any(s.key == "images/tiny" for s in steps):
            steps.append(images.wait_step("tiny"))
        steps += python
    # The end-to-end tests, then the web and E2B files: the first e2e test
    # makes the desktop template they all restore from (VITRINE_E2E_TEMPLATE).
    desktop = []
    if want("e2e"):
        desktop += tests(*[p.binary(SAN, "e2e", t) for t in e2e])
        desktop += tests(*[p.binary(PLAIN, "e2e", t) for t in e2e if flags("e2e", t).plain])
    if want("integration"):
        node = Node()
        js = tests(*[node.test_step(p, kind, n + ".mjs") for kind in ("web", "e2b")
                     for n in _names("tests/%s/*.test.mjs" % kind)])
        if js:
            desktop += [node.deps_step()] + js
    if desktop:
        # Whichever comes first makes the shared template (a cold boot of
        # the desktop; the first test's budget line counts it, not another's).
        desktop[0].timeout_s += TEMPLATE_MAKE_S
        if not any(s.key == "images/tiny" for s in steps):
            steps.append(images.wait_step("tiny"))
        steps.append(images.wait_step("desktop"))
        steps += desktop
    return apply_budget(steps, bud)
