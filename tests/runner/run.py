#!/usr/bin/env python3
"""tests/runner/run.py [unit|integration|e2e|fuzz|all] [--only PATTERNS]:
the whole suite, as tests/run.sh and `make test` run it (docs/testing.md).

One straight sequence: start the guest images' build in the background,
compile (both builds, in parallel make), then the steps in plan order
(plan.py): unit tests in both builds, integration tests that boot nothing
in both, every guest-booting test once from the ASan+UBSan build, the
plain build's smoke and memory-bound tests, fuzz targets, Python, web and
E2B clients, end-to-end tests. Steps run two at a time where tests/budget.txt
allows (schedule.py), each with a time limit derived from its budget.
Past the deadline (80 minutes, VITRINE_TEST_DEADLINE_S) nothing new starts.
Then the hygiene check (no QEMU, supervisor or run dir outlives the tests),
build/test-times.tsv, and the summary ending in "N passed, N failed".
"""

import argparse
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import budget  # noqa: E402
import plan  # noqa: E402
import report  # noqa: E402
import schedule  # noqa: E402
from images import ImageBuild  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEADLINE_S = 80 * 60


def pgrep(pattern):
    r = subprocess.run(["pgrep", "-f", pattern], stdout=subprocess.PIPE, text=True)
    return set(r.stdout.split())


def _cmdline(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def _ppid(pid):
    try:
        with open("/proc/%s/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[1]
    except (OSError, IndexError):
        return ""


def _marked(pid):
    """Whether pid was started under this checkout's suite: it inherited
    the runner's VITRINE_TEST_CHECKOUT (main sets it)."""
    try:
        with open("/proc/%s/environ" % pid, "rb") as f:
            env = f.read().split(b"\0")
    except OSError:
        return False
    return ("VITRINE_TEST_CHECKOUT=" + os.environ.get("VITRINE_TEST_CHECKOUT", "")).encode() in env


def ours(shims, qemus):
    """Of the supervisors and QEMUs running, those of this checkout: a
    supervisor runs this checkout's binary, a QEMU is the child of one of
    this checkout's programs (a supervisor, or a test booting it through
    tests/lib/guest.c), or an orphan that this suite started (it carries
    the suite's mark). A suite run from another checkout (a worktree) at
    the same time keeps its guests, its orphans too."""
    prefix = (REPO + "/").encode()

    def of_ours(pid):
        return (_cmdline(pid) or [b""])[0].startswith(prefix)

    return ({p for p in shims if of_ours(p)},
            {p for p in qemus if of_ours(_ppid(p)) or (_ppid(p) == "1" and _marked(p))})


# What a gateway leaves in the run base by design: its lock (an flock's
# file; vmm-qemu/run_lock.h), no run dir.
RUN_BASE_FILES = {".gateway.lock"}


def left_in_run_base(run_base):
    """The run dirs (and anything else) the tests left in run_base, the
    gateways' lock file aside."""
    if not os.path.isdir(run_base):
        return []
    return sorted(n for n in os.listdir(run_base) if n not in RUN_BASE_FILES)


def hygiene(preexisting, run_base):
    """The last check: no QEMU, guest supervisor or run dir of the tests
    outlived them (what is left is killed and named)."""
    shims, qemu = ours(pgrep("vitrine shim --run-dir") - preexisting,
                       pgrep("qemu-system-x86_64 -name vitrine-") - preexisting)
    dirs = left_in_run_base(run_base)
    if not (qemu or shims or dirs):
        return schedule.Result(passed=1, output="none")
    for pid in qemu | shims:
        try:
            os.kill(int(pid), 9)
        except (ProcessLookupError, ValueError):
            pass
    why = ("left behind: QEMU pids [%s] supervisors [%s] run dirs [%s]"
           % (" ".join(sorted(qemu)), " ".join(sorted(shims)), " ".join(dirs)))
    return schedule.Result(failed=1, output=why, why=why)


def interrupted(signum, frame):
    raise KeyboardInterrupt


def main(argv):
    ap = argparse.ArgumentParser(prog="tests/run.sh", description=__doc__.split("\n\n")[0])
    ap.add_argument("suite", nargs="?", default="all", choices=plan.SUITES)
    ap.add_argument("--only", default="",
                    help="comma-separated patterns (shell globs) of the steps to run, matched against "
                         "budget names such as integration/test_stream or web/viewer.test.mjs, or their "
                         "last part; builds and image waits still run")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("VITRINE_TEST_JOBS", "2")),
                    help="steps at once where the budget allows (default 2, VITRINE_TEST_JOBS)")
    args = ap.parse_args(argv)
    os.chdir(REPO)
    # SIGTERM (a CI's time limit, kill) ends the run as Ctrl-C does: the
    # steps' own sessions do not get it.
    signal.signal(signal.SIGTERM, interrupted)
    start = time.monotonic()
    deadline = start + float(os.environ.get("VITRINE_TEST_DEADLINE_S", DEADLINE_S))

    os.environ.setdefault("VITRINE_HOME", "/var/lib/vitrine")
    # Tests get their own run base, so the hygiene check sees only theirs.
    # One per checkout: the suite removes it at the end.
    checkout = hashlib.sha1(REPO.encode()).hexdigest()[:8]
    # Every process of the suite inherits it: an orphan guest is this
    # suite's when it carries it (hygiene).
    os.environ["VITRINE_TEST_CHECKOUT"] = checkout
    run_base = os.environ.setdefault("VITRINE_RUN", "/tmp/vitrine-test-run-" + checkout)
    shutil.rmtree(run_base, ignore_errors=True)
    os.makedirs(run_base, exist_ok=True)
    # The desktop template the e2e, web and E2B tests share
    # (tests/lib/e2e_template.h): made afresh each run by the first that
    # needs it (an image rebuilt since would make an old one stale). One per
    # checkout, as the run base: VITRINE_HOME is shared, and another
    # checkout's suite removes its own at its start and end.
    shared = os.environ.setdefault("VITRINE_E2E_TEMPLATE", "e2e-shared-desktop-" + checkout)
    shared_dir = os.path.join(os.environ["VITRINE_HOME"], "templates", shared)
    shutil.rmtree(shared_dir, ignore_errors=True)
    # Guests and supervisors already running are not the suite's (another
    # checkout's, a person's gateway): hygiene neither counts nor kills them.
    preexisting = pgrep("qemu-system-x86_64 -name vitrine-|vitrine shim --run-dir")

    with open(os.path.join(REPO, "tests", "budget.txt")) as f:
        try:
            bud = budget.parse(f.read())
        except budget.BudgetError as e:
            print("tests/budget.txt: %s" % e)
            print("0 passed, 1 failed")
            return 1

    os.makedirs("build", exist_ok=True)
    images = ImageBuild(plan.images_for(args.suite), "build/images.log")
    images.start()
    patterns = [p for p in args.only.split(",") if p]
    compile_steps = plan.apply_budget(plan.builds(), bud)
    steps = plan.make(args.suite, bud, images, patterns)
    planned = sum(s.budget_s for s in compile_steps + steps)
    print("tests/run.sh %s: %d steps, %d at a time where allowed, budget %d s, deadline %d s"
          % (args.suite, len(compile_steps + steps), args.jobs, planned, deadline - start))

    def emit(text):
        print(text, flush=True)

    # While a guest image builds, it has a core: one test at a time then
    # (fuzz targets, unit tests and checks have no bounds to break).
    def capacity(step):
        return 1 if images.busy() and step.kind not in ("fuzz", "unit", "check") else args.jobs

    try:
        done = schedule.run_steps(compile_steps, emit=emit)
        if report.totals(done)[1] == 0:
            done += schedule.run_steps(steps, capacity=capacity, deadline=deadline, emit=emit)
        else:
            print("\nthe build failed: no test ran")
    except KeyboardInterrupt:
        plan.stop_all()
        images.stop()
        print("\ninterrupted: the running steps were killed; no summary")
        return 130
    images.stop()

    shutil.rmtree(shared_dir, ignore_errors=True)
    t0 = time.monotonic()
    check = schedule.Step("hygiene: no QEMU, no guest supervisor and no run dir outlive the tests",
                          "check", None, key="hygiene", budget_s=1)
    tidy = schedule.Done(check, hygiene(preexisting, run_base), time.monotonic() - t0)
    emit(schedule.format_done(tidy))
    done.append(tidy)
    shutil.rmtree(run_base, ignore_errors=True)

    report.write_times("build/test-times.tsv", done)
    print("\n(each step's time: build/test-times.tsv)")
    print("\n".join(report.summary(done, time.monotonic() - start, planned)))
    return 0 if report.totals(done)[1] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
