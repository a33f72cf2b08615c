"""tests/runner/outcome.py: what a test program's output and exit status say.

One reader per runner the suite drives: cmocka (the C binaries), node's
TAP reporter (tests/web, tests/e2b), Python's unittest (tests/clients), and
a plain exit status (checks, fuzz targets). Each returns a Result with the
counts, the telling lines of a failure (at most 6, for the summary a CI
page shows) and the retry lines the tests printed ("retry: ..." at the
start of a line: a guest booted again after QEMU crashed, a page asked
again; docs/testing.md). Pure: text and status in, Result out.
"""

import re

from schedule import Result

WHY_LINES = 8
WHY_WIDTH = 300
TAIL_LINES = 4  # of a step killed or crashed: where it was

_RETRY = re.compile(r"^\s*retry: ")


def retries(output):
    """The lines of output that say a test tried something again."""
    return [l.strip() for l in output.splitlines() if _RETRY.match(l)]


def _why(lines, fallback="(no failure line; see its output above)"):
    picked = [l[:WHY_WIDTH] for l in lines if l.strip()][:WHY_LINES]
    return "\n".join(picked) if picked else fallback


def _last_int(pattern, output):
    found = re.findall(pattern, output, re.M)
    return int(found[-1]) if found else 0


def _where(output):
    """Of a program killed or crashed: the test it was in (cmocka's last
    "[ RUN ]" line) and its last lines."""
    lines = [l for l in output.splitlines() if l.strip()]
    runs = [l for l in lines if l.startswith("[ RUN      ]")]
    tail = ["   | " + l for l in lines[-TAIL_LINES:]]
    return ([("!! in " + runs[-1][len("[ RUN      ] "):])] if runs else []) + tail


def status_note(rc, timeout_s):
    """A sentence for an exit status that is not a plain pass or fail."""
    if rc == "timeout":
        return "!! killed after its time limit of %d s" % timeout_s
    if rc < 0:
        return "!! killed by signal %d" % -rc
    return "!! exited with status %d" % rc


def cmocka(output, rc, timeout_s=0):
    """A cmocka binary: its PASSED/FAILED counts; a failed group set-up or
    tear-down (a leak found at the gateway's exit, say), a crash, a
    sanitizer report or a time-out fail it even where its tests passed."""
    passed = _last_int(r"^\[  PASSED  \] (\d+) test", output)
    failed = _last_int(r"^\[  FAILED  \] (\d+) test", output)
    notes = []
    if re.search(r"^\[  FAILED  \] GROUP", output, re.M):
        failed += 1
        notes.append("!! a group set-up or tear-down failed")
    if rc != 0 and failed == 0:
        failed = 1
        notes.append(status_note(rc, timeout_s))
        notes.extend(_where(output))
    why = ""
    if failed:
        # fail_msg()'s own words come on stderr as "ERROR: ...", often
        # inside another line (stdout and stderr interleave).
        telling = [l for l in output.splitlines()
                   if re.search(r'^\[ +(ERROR|LINE|FAILED) +\]|runtime error|ERROR: |'
                                r'^SUMMARY|!!|"status":"failed"', l)
                   and not re.match(r"^\[  FAILED  \] \d+ test", l)]
        why = _why(notes + telling)
    out = output + ("\n" + "\n".join(notes) if notes else "")
    return Result(passed, failed, out, why, retries(output))


def tap(output, rc, timeout_s=0):
    """node --test with the TAP reporter: '# pass N' and '# fail N'; no
    test passed, or a non-zero exit with none failed, is a failure."""
    passed = _last_int(r"^# pass (\d+)$", output)
    failed = _last_int(r"^# fail (\d+)$", output)
    notes = []
    if rc != 0 and failed == 0:
        failed = 1
        notes.append(status_note(rc, timeout_s))
    if passed == 0 and failed == 0:
        failed = 1
        notes.append("!! no test passed")
    why = ""
    if failed:
        why = _why(notes + [l for l in output.splitlines()
                            if re.search(r"^ *not ok|error:|Error", l) and not l.startswith("# ")])
    out = output + ("\n" + "\n".join(notes) if notes else "")
    return Result(passed, failed, out, why, retries(output))


def unittest(output, rc, timeout_s=0):
    """python3 -m unittest -v: 'Ran N tests' and a zero exit, or one failure."""
    ran = _last_int(r"^Ran (\d+) test", output)
    if rc == 0 and ran > 0:
        return Result(ran, 0, output, "", retries(output))
    notes = [status_note(rc, timeout_s)] if rc != 0 else ["!! no test ran"]
    telling = [l for l in output.splitlines() if re.match(r"^(FAIL|ERROR):|^\w*Error", l)]
    return Result(0, 1, output + "\n" + notes[0], _why(notes + telling), retries(output))


def plain(output, rc, timeout_s=0):
    """A check: passes (one) when it exits 0."""
    if rc == 0:
        return Result(1, 0, output, "", retries(output))
    note = status_note(rc, timeout_s)
    lines = output.splitlines()
    return Result(0, 1, output + "\n" + note, _why([note] + lines[-(WHY_LINES - 1):]), retries(output))
