#!/usr/bin/env bash
# Run the checks: ruff (lint and format), then the whole test suite (offline). Sets up .venv on first use,
# with the development extras ([dev] in pyproject.toml; ./bot.sh alone installs only what the bot needs).
# The tests run in parallel workers (pytest-xdist): most of their time is spent waiting (bot processes
# starting, fake servers, timers), so there are more workers than cores, at least 4. TEST_WORKERS sets the
# number; extra arguments go to pytest (e.g. ./test.sh tests/test_ask.py -n 0 to run in one process).
set -euo pipefail
cd "$(dirname "$0")"
VENV_EXTRAS=dev  # the development tools (pytest, ruff, ...) beside what the bot needs
source scripts/venv.sh
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check --quiet .
# compiled modules are cached (in __pycache__, ignored by git) even where the environment says not to:
# every worker and every process the tests start would compile the same sources again
unset PYTHONDONTWRITEBYTECODE
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
workers="${TEST_WORKERS:-$(( cores > 4 ? cores : 4 ))}"
set +e
"$VENV/bin/python" -m pytest -n "$workers" --dist worksteal "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "no tests were collected" >&2
fi
exit "$rc"
