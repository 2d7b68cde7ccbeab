"""./bot.sh and ./test.sh set up the virtual environment (scripts/venv.sh): the bot gets what it needs,
the tests the development tools too.

A stand-in Python records what would be installed: ``-m venv DIR`` makes DIR/bin/python (itself) and
a DIR/bin/ruff that does nothing, and every other call is written to a log instead of run.
"""

import os
import stat
import subprocess
from pathlib import Path

from tests.conftest import ROOT

STAND_IN = """#!/usr/bin/env bash
echo "$*" >> "$CALLS"
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin"
  cp "$0" "$3/bin/python"
  printf '#!/usr/bin/env bash\\nexit 0\\n' > "$3/bin/ruff"
  chmod +x "$3/bin/ruff"
fi
exit 0
"""


def run(script: str, venv: Path, python: Path, calls: Path) -> list[str]:
    """Run ./bot.sh or ./test.sh with the stand-in; the pip installs it asked for."""
    before = calls.read_text().splitlines() if calls.exists() else []
    env = {"PATH": os.environ["PATH"], "VENV": str(venv), "PYTHON": str(python), "CALLS": str(calls)}
    subprocess.run([str(ROOT / script), "--version"], env=env, check=True, capture_output=True, timeout=60)
    new = calls.read_text().splitlines()[len(before) :]
    return [line for line in new if line.startswith("-m pip install") and "--upgrade pip" not in line]


def test_bot_sh_installs_the_runtime_only_and_test_sh_adds_the_dev_extras(tmp_path: Path):
    python = tmp_path / "python3"
    python.write_text(STAND_IN)
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    venv, calls = tmp_path / "venv", tmp_path / "calls"

    assert run("bot.sh", venv, python, calls) == [f"-m pip install --quiet -e {ROOT}"]  # no [dev]
    assert run("bot.sh", venv, python, calls) == []  # installed already
    assert run("test.sh", venv, python, calls) == [f"-m pip install --quiet -e {ROOT}[dev]"]
    assert run("test.sh", venv, python, calls) == []
    assert run("bot.sh", venv, python, calls) == []  # the development tools stay


def test_a_fresh_clone_gets_the_dev_extras_from_test_sh(tmp_path: Path):
    """CI runs ./test.sh on a fresh clone: it must install the development tools at once."""
    python = tmp_path / "python3"
    python.write_text(STAND_IN)
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    assert run("test.sh", tmp_path / "venv", python, tmp_path / "calls") == [f"-m pip install --quiet -e {ROOT}[dev]"]
