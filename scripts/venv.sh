#!/usr/bin/env bash
# Make sure ./.venv exists and has the project (and its dev tools) installed from pyproject.toml.
# Sourced by ./bot.sh and ./test.sh; re-installs only when pyproject.toml changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ]; then
  echo "creating virtual environment in $VENV" >&2
  "$PY" -m venv "$VENV"
fi
STAMP="$VENV/.installed-pyproject"
if [ ! -f "$STAMP" ] || ! cmp -s "$ROOT/pyproject.toml" "$STAMP"; then
  echo "installing dependencies from pyproject.toml" >&2
  "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
  "$VENV/bin/python" -m pip install --quiet -e "$ROOT[dev]" >&2
  cp "$ROOT/pyproject.toml" "$STAMP"
fi
