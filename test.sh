#!/usr/bin/env bash
# Run the checks: ruff, then the whole test suite (offline). Sets up .venv on first use.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/venv.sh
"$VENV/bin/ruff" check .
set +e
"$VENV/bin/python" -m pytest "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "no tests were collected" >&2
fi
exit "$rc"
