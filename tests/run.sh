#!/usr/bin/env bash
# tests/run.sh [unit|integration|e2e|fuzz|all] [--only PATTERNS] [--jobs N]:
# the whole suite (or a part), as `make test` and CI run it. The runner is
# tests/runner/run.py (docs/testing.md says what runs where, the budgets in
# tests/budget.txt and how to run one test); it ends with "N passed, N failed".
cd "$(dirname "$0")/.." && exec python3 -u tests/runner/run.py "$@"
