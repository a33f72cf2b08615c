"""tests/runner/report.py: the suite's summary and its record of times.

From the finished steps (schedule.Done): build/test-times.tsv (one line a
step: name, kind, result, budget and seconds, seconds last), and the text
that ends the log: seconds by kind, the 20 slowest steps, the steps over
their budget (a warning: these machines are noisy), the retries, what the
deadline left unrun, the telling lines of each failure, and the closing
"N passed, N failed" line. Pure but for write_times.
"""

import budget

SLOWEST = 20


def write_times(path, done):
    """Writes the record of times (tab-separated, a header first)."""
    with open(path, "w") as f:
        f.write("step\tkind\tresult\tbudget_s\tseconds\n")
        for d in done:
            f.write("%s\t%s\t%s\t%g\t%.1f\n" % (d.step.name, d.step.kind, d.result.status,
                                                 d.step.budget_s, d.seconds))


def totals(done):
    """(passed, failed): the steps' counts, and one more failure per step
    not run."""
    passed = sum(d.result.passed for d in done)
    failed = sum(d.result.failed for d in done)
    failed += sum(1 for d in done if d.result.status == "not run")
    return passed, failed


def summary(done, wall_s, planned_budget_s):
    """The summary's lines, the closing count last."""
    lines = []
    by_kind = {}
    for d in done:
        by_kind[d.step.kind] = by_kind.get(d.step.kind, 0.0) + d.seconds
    lines.append("")
    lines.append("=== summary: %d s in all, %d s in steps; the plan's budget %d s"
                 % (round(wall_s), round(sum(by_kind.values())), round(planned_budget_s)))
    lines.append("seconds by kind: " + ", ".join("%s %d" % (k, round(v)) for k, v in
                                                 sorted(by_kind.items(), key=lambda kv: -kv[1])))
    ran = [d for d in done if d.result.status != "not run"]
    lines.append("slowest %d steps (s, budget):" % min(SLOWEST, len(ran)))
    for d in sorted(ran, key=lambda d: -d.seconds)[:SLOWEST]:
        lines.append("    %6.0f  %5.0f  %s" % (d.seconds, d.step.budget_s, d.step.name))
    over = [d for d in ran if budget.over_budget(d.seconds, d.step.budget_s, d.step.own)]
    if over:
        lines.append("over budget (past %gx its line, or no line in tests/budget.txt): %d"
                     % (budget.OVER_FACTOR, len(over)))
        for d in over:
            lines.append("    %s: %.0f s, budget %s" % (d.step.name, d.seconds,
                                                        "%g s" % d.step.budget_s if d.step.own
                                                        else "none (its kind's default %g s)" % d.step.budget_s))
    tried = [(d.step.name, r) for d in done for r in d.result.retries]
    lines.append("retries: %d" % len(tried))
    for name, r in tried:
        lines.append("    %s: %s" % (name, r))
    unrun = [d.step.name for d in done if d.result.status == "not run"]
    if unrun:
        lines.append("not run, the deadline having passed: %d steps" % len(unrun))
        lines.extend("    " + n for n in unrun)
    failed_steps = [d for d in done if d.result.failed]
    if failed_steps:
        lines.append("")
        lines.append("why, in short:")
        for d in failed_steps:
            lines.append("%s:" % d.step.name)
            lines.extend("    " + l for l in (d.result.why or "(see its output above)").split("\n"))
        lines.append("")
        lines.append("failed: " + " ".join(d.step.name for d in failed_steps))
    if unrun:
        lines.append("not run: %d steps (the deadline)" % len(unrun))
    passed, failed = totals(done)
    lines.append("%d passed, %d failed" % (passed, failed))
    return lines
