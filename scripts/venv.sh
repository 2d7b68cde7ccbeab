#!/usr/bin/env bash
# Make sure ./.venv exists and has the project installed from pyproject.toml.
# Sourced by ./bot.sh (what the bot needs: the runtime dependencies only) and by ./test.sh, which sets
# VENV_EXTRAS=dev first (the development tools too: pytest, ruff, hadolint, pyte).
# Installs only when pyproject.toml changed or an extra is wanted that is not installed yet; a reinstall
# keeps the extras installed before (a development .venv stays one when ./bot.sh runs in it).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3}"
WANTED="${VENV_EXTRAS:-}"
if [ ! -x "$VENV/bin/python" ]; then
  echo "creating virtual environment in $VENV" >&2
  "$PY" -m venv "$VENV"
fi
STAMP="$VENV/.installed-pyproject"
EXTRAS_STAMP="$VENV/.installed-extras"
installed=""
if [ -f "$EXTRAS_STAMP" ]; then
  installed="$(cat "$EXTRAS_STAMP")"
elif [ -f "$STAMP" ]; then
  installed="dev"  # made before the extras were recorded: this script installed [dev] then
fi
extras="$installed"
missing=""
for extra in ${WANTED//,/ }; do
  case ",$installed," in
    *",$extra,"*) ;;
    *) missing="$extra"; extras="${extras:+$extras,}$extra" ;;
  esac
done
if [ ! -f "$STAMP" ] || ! cmp -s "$ROOT/pyproject.toml" "$STAMP" || [ -n "$missing" ]; then
  echo "installing dependencies from pyproject.toml${extras:+ (with $extras)}" >&2
  "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
  "$VENV/bin/python" -m pip install --quiet -e "$ROOT${extras:+[$extras]}" >&2
  cp "$ROOT/pyproject.toml" "$STAMP"
  printf '%s' "$extras" > "$EXTRAS_STAMP"
fi
