"""tests/runner/schedule.py: runs the suite's steps, two at a time where safe.

A step is a name, a kind and an action (a function that does the work and
returns a Result). run_steps starts them in list order, as many at a time
as capacity(step) allows for the next (the runner says 2 on 2 cores, 1 for
a test while a guest image builds in the background); a solo step runs
with nothing beside it. Each
step's output is captured and printed whole, in list order, so a log reads
the same as a serial run's. Past the deadline no new step starts: the rest
are returned as not run.

The clock, the output and the capacity are the caller's, so the tests
(tests/runner/test_runner.py) drive it with fake steps.
"""

import queue
import threading
import time


class Result:
    """What a step did: tests passed and failed, its output, the telling
    lines of a failure (why), retry lines its tests printed, and a status:
    "ok", "failed" or "not run"."""

    def __init__(self, passed=0, failed=0, output="", why="", retries=(), status=None):
        self.passed = passed
        self.failed = failed
        self.output = output
        self.why = why
        self.retries = list(retries)
        self.status = status or ("failed" if failed else "ok")


class Step:
    """One unit of the suite. key is its name in the budget file (the
    same for both builds' runs of a binary); name is what the log shows."""

    def __init__(self, name, kind, action, key=None, budget_s=60.0, own=True, solo=False, timeout_s=None):
        self.name = name
        self.key = key or name
        self.kind = kind
        self.action = action
        self.budget_s = budget_s
        self.own = own  # the budget is the step's own line, not its kind's default
        self.solo = solo
        self.timeout_s = timeout_s


class Done:
    """A step's end: its result and wall time (0 for a step not run)."""

    def __init__(self, step, result, seconds):
        self.step = step
        self.result = result
        self.seconds = seconds


def _run_one(index, step, clock, finished):
    start = clock()
    try:
        result = step.action(step)
    except Exception as e:  # a runner bug must not hang the suite
        result = Result(failed=1, output="runner: %s: %r" % (step.name, e), why="runner: %r" % e)
    finished.put((index, result, clock() - start))


def format_done(d):
    """The log's lines for one finished step: a title, its output indented,
    and its time."""
    lines = ["", "=== %s" % d.step.name]
    if d.result.status == "not run":
        lines.append("    not run: the suite's deadline had passed")
        return "\n".join(lines)
    out = d.result.output.rstrip("\n")
    if out:
        lines.extend("    " + l for l in out.split("\n"))
    lines.append("    (%d s)" % round(d.seconds))
    return "\n".join(lines)


def run_steps(steps, capacity=lambda step: 2, deadline=None, clock=time.monotonic, emit=print, poll_s=0.5):
    """Runs steps (see the file's comment) and returns one Done per step,
    in list order. deadline is a value of clock past which nothing starts
    (None: no deadline). emit gets each step's formatted text in order."""
    n = len(steps)
    done = [None] * n
    running = set()
    finished = queue.Queue()
    started = printed = 0
    stopped = False

    while printed < n:
        while started < n and not stopped:
            if deadline is not None and clock() >= deadline:
                stopped = True
                break
            step = steps[started]
            if running and (step.solo or any(steps[j].solo for j in running) or
                            len(running) >= max(1, capacity(step))):
                break
            running.add(started)
            threading.Thread(target=_run_one, args=(started, step, clock, finished), daemon=True).start()
            started += 1
        if stopped:
            for j in range(started, n):
                if done[j] is None:
                    done[j] = Done(steps[j], Result(status="not run"), 0.0)
            started = n
        while printed < n and done[printed] is not None:
            emit(format_done(done[printed]))
            printed += 1
        if printed == n:
            break
        try:
            index, result, seconds = finished.get(timeout=poll_s)
        except queue.Empty:
            continue  # capacity or the deadline may have changed
        running.discard(index)
        done[index] = Done(steps[index], result, seconds)
    return done
