"""tests/runner/budget.py: the suite's time budget (tests/budget.txt), parsed.

Every step of the suite (a test binary, a node test file, a fuzz target, a
build) has a line: its name, the seconds it may take, and how it runs.

    integration/test_agent      40   boots
    default integration         120  boots solo

Flags:
    boots   starts a guest: runs in the sanitizer pass only, so that every
            guest of the suite boots once (docs/testing.md)
    plain   runs in the plain pass as well, booting or not (the memory bounds
            that hold only without ASan, the smoke of the plain binary)
    solo    has latency, memory or "not before" bounds, or shares something
            with other tests: never runs beside another step

`default KIND SECONDS [FLAGS]` is what a step of KIND without a line of its
own gets; such a step is listed as over budget. A step's time limit is
derived from its budget (timeout_s), so a hang costs minutes.

Pure: text in, values out; errors raise BudgetError with the line number.
"""

FLAGS = ("boots", "plain", "solo")
# A step whose kind has no default line (a build, a check) gets this.
FALLBACK_SECONDS = 60.0
# Over budget: past this many times its budget.
OVER_FACTOR = 1.5


class BudgetError(ValueError):
    pass


class Entry:
    """One line: a step's (or a kind's default) seconds and flags."""

    def __init__(self, seconds, flags, line=0):
        self.seconds = float(seconds)
        self.flags = frozenset(flags)
        self.line = line

    @property
    def boots(self):
        return "boots" in self.flags

    @property
    def plain(self):
        return "plain" in self.flags

    @property
    def solo(self):
        return "solo" in self.flags

    def __repr__(self):
        return "Entry(%g, %s)" % (self.seconds, sorted(self.flags))


class Budget:
    """The parsed file: entries by step name, defaults by kind."""

    def __init__(self, entries, defaults):
        self.entries = entries
        self.defaults = defaults

    def lookup(self, name, kind):
        """(entry, own): the step's line, or its kind's default (own False)."""
        if name in self.entries:
            return self.entries[name], True
        return self.defaults.get(kind, Entry(FALLBACK_SECONDS, ())), False


def parse(text):
    """Parses the budget file's text. Raises BudgetError naming the line of
    a bad number, an unknown flag or a name given twice."""
    entries, defaults = {}, {}
    for n, raw in enumerate(text.splitlines(), 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "default":
            if len(words) < 3:
                raise BudgetError("line %d: 'default KIND SECONDS [FLAGS]'" % n)
            table, name, rest = defaults, words[1], words[2:]
        else:
            if len(words) < 2:
                raise BudgetError("line %d: 'NAME SECONDS [FLAGS]'" % n)
            table, name, rest = entries, words[0], words[1:]
        try:
            seconds = float(rest[0])
        except ValueError:
            raise BudgetError("line %d: '%s' is not a number of seconds" % (n, rest[0])) from None
        if not seconds > 0 or seconds != seconds or seconds == float("inf"):
            raise BudgetError("line %d: the seconds must be above 0" % n)
        flags = [f for word in rest[1:] for f in word.split(",") if f]
        for f in flags:
            if f not in FLAGS:
                raise BudgetError("line %d: unknown flag '%s' (known: %s)" % (n, f, ", ".join(FLAGS)))
        if name in table:
            raise BudgetError("line %d: '%s' has a line already (line %d)" % (n, name, table[name].line))
        table[name] = Entry(seconds, flags, n)
    return Budget(entries, defaults)


def timeout_s(budget_s):
    """A step's time limit: four times its budget, at least two minutes."""
    return max(120.0, 4.0 * budget_s)


def over_budget(seconds, budget_s, own):
    """Whether a step that took seconds is listed as over its budget."""
    return not own or seconds > OVER_FACTOR * budget_s
