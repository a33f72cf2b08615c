#!/usr/bin/env python3
"""tests/runner/test_runner.py: the suite runner's own tests (unittest):
the budget file's parser and rules, the scheduler on fake steps (order of
output, two at a time, solo, the deadline), the readers of test output, the
summary, and the committed tests/budget.txt against the tree (every test has
a line, every line a test, the plan's budget within 40 minutes).

Run: python3 tests/runner/test_runner.py (tests/run.sh unit runs it).
"""

import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import budget  # noqa: E402
import outcome  # noqa: E402
import plan  # noqa: E402
import report  # noqa: E402
import schedule  # noqa: E402
from images import ImageBuild  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class BudgetParse(unittest.TestCase):
    def test_lines_defaults_and_flags(self):
        b = budget.parse("# a comment\n\nintegration/test_a 40 boots solo  # why\n"
                         "unit/test_b 2.5\ndefault integration 120 boots,solo\ne2e/test_c 9 boots,plain\n")
        e, own = b.lookup("integration/test_a", "integration")
        self.assertEqual((e.seconds, own, e.boots, e.solo, e.plain), (40.0, True, True, True, False))
        e, own = b.lookup("unit/test_b", "unit")
        self.assertEqual((e.seconds, own, e.flags), (2.5, True, frozenset()))
        e, own = b.lookup("integration/test_new", "integration")
        self.assertEqual((e.seconds, own, e.boots, e.solo), (120.0, False, True, True))
        e, own = b.lookup("e2e/test_c", "e2e")
        self.assertTrue(e.boots and e.plain)
        e, own = b.lookup("web/x.test.mjs", "web")
        self.assertEqual((e.seconds, own), (budget.FALLBACK_SECONDS, False))

    def test_errors_name_the_line(self):
        for text, words in (("a 1\nb x\n", "line 2: 'x' is not a number"),
                            ("a 1 fast\n", "line 1: unknown flag 'fast'"),
                            ("a 1\na 2\n", "line 2: 'a' has a line already (line 1)"),
                            ("a\n", "line 1: 'NAME SECONDS"),
                            ("default unit\n", "line 1: 'default KIND"),
                            ("a 0\n", "line 1: the seconds must be above 0"),
                            ("a -3\n", "above 0"),
                            ("a nan\n", "above 0")):
            with self.assertRaises(budget.BudgetError) as cm:
                budget.parse(text)
            self.assertIn(words, str(cm.exception))

    def test_time_limit_and_over_budget(self):
        self.assertEqual(budget.timeout_s(5), 120)
        self.assertEqual(budget.timeout_s(30), 120)
        self.assertEqual(budget.timeout_s(100), 400)
        self.assertFalse(budget.over_budget(15, 10, True))
        self.assertTrue(budget.over_budget(15.1, 10, True))
        self.assertTrue(budget.over_budget(1, 10, False))  # no line of its own


def fake(name, seconds, log, solo=False, failed=0, output=None):
    """A step that sleeps, noting when it ran, and answers failed tests."""
    def action(step):
        log.append(("start", name, time.monotonic()))
        time.sleep(seconds)
        log.append(("end", name, time.monotonic()))
        return schedule.Result(passed=1 - min(failed, 1), failed=failed,
                               output=output if output is not None else "%s's output" % name)
    return schedule.Step(name, "unit", action, solo=solo, budget_s=seconds)


def most_at_once(log):
    now = top = 0
    for what, _, _ in sorted(log, key=lambda e: (e[2], e[0] == "start")):
        now += 1 if what == "start" else -1
        top = max(top, now)
    return top


class Schedule(unittest.TestCase):
    def test_output_in_list_order_two_at_a_time(self):
        log, out = [], []
        steps = [fake("slow", 0.3, log), fake("quick", 0.05, log), fake("third", 0.05, log)]
        done = schedule.run_steps(steps, capacity=lambda step: 2, emit=out.append, poll_s=0.01)
        self.assertEqual([d.step.name for d in done], ["slow", "quick", "third"])
        self.assertEqual([o.split("\n")[1] for o in out], ["=== slow", "=== quick", "=== third"])
        self.assertIn("    slow's output", out[0])
        self.assertEqual(most_at_once(log), 2)
        # quick finished first, yet its output came after slow's
        ends = [e[1] for e in log if e[0] == "end"]
        self.assertEqual(ends[0], "quick")
        self.assertGreaterEqual(done[0].seconds, 0.3)

    def test_capacity_one_runs_serially(self):
        log = []
        schedule.run_steps([fake(str(i), 0.05, log) for i in range(4)], capacity=lambda step: 1,
                           emit=lambda t: None, poll_s=0.01)
        self.assertEqual(most_at_once(log), 1)

    def test_solo_runs_alone(self):
        log = []
        steps = [fake("a", 0.1, log), fake("b", 0.1, log), fake("solo", 0.1, log, solo=True),
                 fake("c", 0.1, log), fake("d", 0.1, log)]
        schedule.run_steps(steps, capacity=lambda step: 2, emit=lambda t: None, poll_s=0.01)
        when = {(w, n): t for w, n, t in log}
        for other in "abcd":
            self.assertTrue(when[("end", other)] <= when[("start", "solo")] or
                            when[("start", other)] >= when[("end", "solo")], other)
        self.assertEqual(most_at_once([e for e in log if e[1] in "ab"]), 2)

    def test_deadline_starts_nothing_new(self):
        log, out = [], []
        t = [0.0]
        lock = threading.Lock()

        def clock():
            with lock:
                return t[0]

        def tick(name):
            def action(step):
                log.append(name)
                with lock:
                    t[0] += 10  # each step takes 10 s of the fake clock
                return schedule.Result(passed=1)
            return schedule.Step(name, "integration", action)
        steps = [tick("s%d" % i) for i in range(5)]
        done = schedule.run_steps(steps, capacity=lambda step: 1, deadline=25, clock=clock,
                                  emit=out.append, poll_s=0.01)
        self.assertEqual(log, ["s0", "s1", "s2"])
        self.assertEqual([d.result.status for d in done], ["ok", "ok", "ok", "not run", "not run"])
        self.assertIn("not run: the suite's deadline had passed", out[3])
        self.assertEqual(report.totals(done), (3, 2))
        lines = report.summary(done, 30, 100)
        self.assertEqual(lines[-1], "3 passed, 2 failed")
        self.assertIn("not run, the deadline having passed: 2 steps", lines)
        self.assertIn("    s4", lines)

    def test_a_raising_step_fails_and_the_rest_runs(self):
        def boom(step):
            raise RuntimeError("bug")
        done = schedule.run_steps([schedule.Step("boom", "unit", boom), fake("after", 0.01, [])],
                                  emit=lambda t: None, poll_s=0.01)
        self.assertEqual([d.result.status for d in done], ["failed", "ok"])
        self.assertIn("RuntimeError('bug')", done[0].result.why)


CMOCKA_OK = """[==========] tests: Running 2 test(s).
[ RUN      ] a
[       OK ] a
[==========] tests: 2 test(s) run.
[  PASSED  ] 2 test(s).
"""
CMOCKA_FAIL = """[ RUN      ] b
[  ERROR   ] --- 0x1 != 0x2
[   LINE   ] --- tests/integration/test_x.c:12: error: Failure!
[  FAILED  ] b
[  PASSED  ] 3 test(s).
[  FAILED  ] 1 test(s), listed below:
[  FAILED  ] b
"""


class Outcome(unittest.TestCase):
    def test_cmocka(self):
        r = outcome.cmocka(CMOCKA_OK, 0)
        self.assertEqual((r.passed, r.failed, r.status), (2, 0, "ok"))
        r = outcome.cmocka(CMOCKA_FAIL, 1)
        self.assertEqual((r.passed, r.failed), (3, 1))
        self.assertIn("test_x.c:12", r.why)
        self.assertNotIn("1 test(s), listed", r.why)
        # fail_msg's words, on stderr, inside a line of stdout
        r = outcome.cmocka(CMOCKA_FAIL.replace("[  FAILED  ] b\n", "[  FAILED  ] b\n[====] 1 test(s) run."
                                               "ERROR: field is \"q\", want \"a\"\n", 1), 1)
        self.assertIn('ERROR: field is "q", want "a"', r.why)

    def test_cmocka_crash_group_and_timeout_fail(self):
        r = outcome.cmocka(CMOCKA_OK + "SUMMARY: AddressSanitizer: 8 byte(s) leaked\n", 1)
        self.assertEqual((r.passed, r.failed), (2, 1))
        self.assertIn("SUMMARY: AddressSanitizer", r.why)
        r = outcome.cmocka(CMOCKA_OK + "[  FAILED  ] GROUP tests\n", 0)
        self.assertEqual(r.failed, 1)
        r = outcome.cmocka("[ RUN      ] a\n[       OK ] a\n[ RUN      ] b\nbuilding x\n",
                           "timeout", 480)
        self.assertEqual(r.failed, 1)
        self.assertIn("time limit of 480 s", r.why)
        self.assertIn("!! in b", r.why)
        self.assertIn("   | building x", r.why)
        r = outcome.cmocka("[ RUN      ] a\n", -11)
        self.assertIn("killed by signal 11", r.why)

    def test_tap_and_unittest_and_plain(self):
        r = outcome.tap("ok 1 - x\n# pass 4\n# fail 0\n", 0)
        self.assertEqual((r.passed, r.failed), (4, 0))
        r = outcome.tap("not ok 2 - y\n# pass 3\n# fail 1\n", 1)
        self.assertEqual((r.passed, r.failed), (3, 1))
        self.assertIn("not ok 2 - y", r.why)
        self.assertEqual(outcome.tap("", 0).failed, 1)  # ran nothing
        self.assertEqual(outcome.unittest("Ran 7 tests in 3s\n\nOK\n", 0).passed, 7)
        self.assertEqual(outcome.unittest("Ran 0 tests in 0s\n", 0).failed, 1)
        self.assertEqual(outcome.unittest("FAIL: test_a\nRan 7 tests\n", 1).failed, 1)
        self.assertEqual(outcome.plain("x", 0).passed, 1)
        self.assertEqual(outcome.plain("x", 2).failed, 1)

    def test_retries_are_counted(self):
        out = ("    retry: test guest tiny: QEMU killed by signal 11; booting once more\n"
               "no retry: here\nretry: page_eval: no answer (try 2 of 3)\n" + CMOCKA_OK)
        r = outcome.cmocka(out, 0)
        self.assertEqual(len(r.retries), 2)
        done = [schedule.Done(schedule.Step("s", "integration", None), r, 5)]
        lines = report.summary(done, 5, 5)
        self.assertIn("retries: 2", lines)
        self.assertIn("    s: retry: page_eval: no answer (try 2 of 3)", lines)


class QemuCrash(unittest.TestCase):
    """A step whose output shows QEMU's own crash runs once more."""

    def run_script(self, script):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            step = schedule.Step("build-san: integration/test_x", "integration", None, timeout_s=30)
            return plan.run_test(["sh", "-c", script, "sh", os.path.join(d, "ran")], step, {}, outcome.plain)

    def test_a_crash_runs_the_step_again(self):
        r = self.run_script('if [ -e "$1" ]; then echo fine; exit 0; fi; touch "$1"; '
                            'echo "session: failed: QEMU killed by signal 11 (Segmentation fault)"; exit 1')
        self.assertEqual((r.passed, r.failed), (1, 0))
        self.assertEqual(len(r.retries), 1)
        self.assertIn("QEMU crashed (signal 11), the step ran once more", r.retries[0])
        self.assertIn("Segmentation fault", r.output)
        self.assertIn("fine", r.output)

    def test_twice_fails_and_other_failures_are_not_run_again(self):
        r = self.run_script('echo "QEMU killed by signal 11"; exit 1')
        self.assertEqual((r.failed, len(r.retries)), (1, 1))
        r = self.run_script('if [ -e "$1" ]; then exit 0; fi; touch "$1"; echo "QEMU killed by signal 6"; exit 1')
        self.assertEqual((r.failed, r.retries), (1, []))


class Summary(unittest.TestCase):
    def test_kinds_slowest_and_over_budget(self):
        def d(name, kind, secs, budget_s, own=True, failed=0):
            return schedule.Done(schedule.Step(name, kind, None, budget_s=budget_s, own=own),
                                 schedule.Result(passed=1, failed=failed, why="it broke"), secs)
        done = [d("a", "unit", 1, 3), d("b", "integration", 100, 60), d("c", "integration", 50, 60),
                d("n", "e2e", 10, 240, own=False), d("f", "unit", 2, 3, failed=1)]
        lines = report.summary(done, 200, 369)
        text = "\n".join(lines)
        self.assertIn("seconds by kind: integration 150, e2e 10, unit 3", text)
        self.assertIn("    b: 100 s, budget 60 s", text)
        self.assertIn("    n: 10 s, budget none (its kind's default 240 s)", text)
        self.assertNotIn("    c: 50 s", text)
        self.assertIn("f:\n    it broke", text)
        self.assertEqual(lines[-1], "5 passed, 1 failed")
        slowest = lines.index("slowest 5 steps (s, budget):")
        self.assertIn(" b", lines[slowest + 1])

    def test_times_file_has_seconds_last(self):
        import tempfile
        done = [schedule.Done(schedule.Step("build-san: unit/test_a", "unit", None, budget_s=3),
                              schedule.Result(passed=1), 1.25)]
        with tempfile.NamedTemporaryFile("r") as f:
            report.write_times(f.name, done)
            rows = f.read().splitlines()
        self.assertEqual(rows[1].split("\t"), ["build-san: unit/test_a", "unit", "ok", "3", "1.2"])


class Hygiene(unittest.TestCase):
    def test_only_this_suites_marked_processes_count(self):
        import subprocess
        import run
        saved = os.environ.get("VITRINE_TEST_CHECKOUT")
        os.environ["VITRINE_TEST_CHECKOUT"] = "aaaa1111"
        try:
            mine = subprocess.Popen(["sleep", "30"])
            other = subprocess.Popen(["sleep", "30"],
                                     env=dict(os.environ, VITRINE_TEST_CHECKOUT="bbbb2222"))
            try:
                self.assertTrue(run._marked(str(mine.pid)))
                self.assertFalse(run._marked(str(other.pid)))
                self.assertFalse(run._marked("999999999"))
            finally:
                for p in (mine, other):
                    p.kill()
                    p.wait()
        finally:
            if saved is None:
                del os.environ["VITRINE_TEST_CHECKOUT"]
            else:
                os.environ["VITRINE_TEST_CHECKOUT"] = saved

    def test_the_run_base_lock_is_no_leftover(self):
        import tempfile
        import run
        with tempfile.TemporaryDirectory() as base:
            self.assertEqual(run.left_in_run_base(base + "/missing"), [])
            open(os.path.join(base, ".gateway.lock"), "w").close()
            self.assertEqual(run.left_in_run_base(base), [])
            os.mkdir(os.path.join(base, "vm-abc123"))
            self.assertEqual(run.left_in_run_base(base), ["vm-abc123"])


class CommittedBudget(unittest.TestCase):
    """tests/budget.txt against the tree as it is."""

    def setUp(self):
        with open(os.path.join(REPO, "tests", "budget.txt")) as f:
            self.bud = budget.parse(f.read())
        self.steps = plan.apply_budget(plan.builds(), self.bud) + plan.make("all", self.bud, ImageBuild([], "/dev/null"))

    def test_every_step_has_its_own_line(self):
        missing = sorted({s.key for s in self.steps if not s.own})
        self.assertEqual(missing, [], "steps without a line in tests/budget.txt")

    def test_every_line_names_a_step(self):
        keys = {s.key for s in self.steps}
        stale = sorted(set(self.bud.entries) - keys)
        self.assertEqual(stale, [], "lines in tests/budget.txt that name no step")

    def test_the_plan_fits_40_minutes(self):
        total = sum(s.budget_s for s in self.steps)
        self.assertLessEqual(total, 2400, "the plan's budget is %d s" % total)

    def test_a_pass_runs_its_pairs_before_its_solo_steps(self):
        san = [s for s in self.steps if s.name.startswith(plan.SAN + ": integration/")]
        solo = [s.solo for s in san]
        self.assertIn(True, solo)
        self.assertIn(False, solo)
        self.assertEqual(solo, sorted(solo), "a solo step before a pairable one")
        names = [s.key for s in san if s.solo]
        self.assertEqual(names, sorted(names))

    def test_booting_steps_run_once_unless_plain(self):
        runs = {}
        for s in self.steps:
            runs.setdefault(s.key, []).append(s.name.split(":")[0])
        for key, builds in runs.items():
            entry, _ = self.bud.lookup(key, key.split("/")[0])
            if key.startswith(("unit/", "integration/", "e2e/")):
                want = [plan.PLAIN, plan.SAN] if (not entry.boots or entry.plain) else [plan.SAN]
                self.assertEqual(sorted(builds), sorted(want), key)


if __name__ == "__main__":
    unittest.main(verbosity=2)
