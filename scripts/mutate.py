#!/usr/bin/env python3
"""Break the code on purpose, one change at a time, and see whether the tests notice.

    .venv/bin/python scripts/mutate.py                      # every mutation of scripts/mutations.toml
    .venv/bin/python scripts/mutate.py --only client- rank  # those whose id starts with one of these
    .venv/bin/python scripts/mutate.py --list other.toml --timeout 300

Each mutation in the list (TOML, ``[[mutation]]`` tables) names a ``file``, an ``original`` snippet
that must occur exactly once in it, its ``replacement``, the ``tests`` to run and a one-line
``description`` (``id`` names it; ``owner`` -- the branch rewriting that code -- and ``issue`` are
notes shown in the report; ``tests`` may be pytest node ids, ``file.py::test_name``). The tree
(git's tracked and untracked, not ignored, files) is copied once to a temporary directory; the
working tree is never written to, so Ctrl-C or a crash leaves it as it was (the copy is removed).
The tests of every mutation are first run on the unchanged copy (they must pass), then for each
mutation: the snippet is replaced in the copy, ``PYTHON -m pytest -x -q -n 0 TESTS`` runs there,
and the file is put back. A test run that fails (or exceeds ``--timeout``) caught the mutation;
one that passes missed it; a snippet not found in its file (the code moved on) is "stale" and one
found more than once "ambiguous" -- reported, never silently skipped.

The exit status is 0 when every mutation was caught, 1 when one was missed, 2 when none was missed
but some were stale or ambiguous (the list needs updating), 3 when the unchanged tests failed, 130
on Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_LIST = Path(__file__).resolve().with_name("mutations.toml")


@dataclass(frozen=True)
class Mutation:
    id: str
    file: str
    original: str
    replacement: str
    tests: tuple[str, ...]
    description: str
    owner: str = ""
    issue: str = ""


@dataclass
class Outcome:
    mutation: Mutation
    status: str  # caught | missed | stale | ambiguous | timeout
    seconds: float = 0.0
    detail: str = ""


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)

    def count(self, *statuses: str) -> int:
        return sum(1 for o in self.outcomes if o.status in statuses)

    @property
    def caught(self) -> int:
        return self.count("caught", "timeout")

    @property
    def missed(self) -> int:
        return self.count("missed")

    @property
    def score(self) -> float:
        ran = self.caught + self.missed
        return 100.0 * self.caught / ran if ran else 0.0


def load(path: Path) -> list[Mutation]:
    """The mutations of a list file; a malformed entry is an error naming it."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out: list[Mutation] = []
    seen: set[str] = set()
    for i, row in enumerate(data.get("mutation", []), 1):
        where = f"{path.name}: mutation {i} ({row.get('id', 'no id')})"
        for key in ("id", "file", "original", "replacement", "tests", "description"):
            if key not in row:
                raise ValueError(f"{where}: '{key}' is missing")
        tests = row["tests"]
        if isinstance(tests, str):
            tests = [tests]
        if not tests or not all(isinstance(t, str) for t in tests):
            raise ValueError(f"{where}: 'tests' must name test files")
        if row["original"] == row["replacement"]:
            raise ValueError(f"{where}: the replacement is the original")
        if row["id"] in seen:
            raise ValueError(f"{where}: the id is used twice")
        seen.add(row["id"])
        out.append(
            Mutation(
                id=str(row["id"]),
                file=str(row["file"]),
                original=str(row["original"]),
                replacement=str(row["replacement"]),
                tests=tuple(tests),
                description=str(row["description"]),
                owner=str(row.get("owner", "")),
                issue=str(row.get("issue", "")),
            )
        )
    return out


def copy_tree(root: Path, dest: Path) -> None:
    """Copy git's tracked and untracked (not ignored) files of ``root`` into ``dest``; ``.venv`` is linked."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for raw in listed:
        if not raw:
            continue
        rel = os.fsdecode(raw)
        src = root / rel
        if not src.is_file():  # deleted in the working tree but still in the index
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    venv = root / ".venv"
    if venv.exists():
        (dest / ".venv").symlink_to(venv)


def run_tests(python: str, tree: Path, tests: tuple[str, ...], timeout: float) -> tuple[str, str]:
    """('passed' | 'failed' | 'timeout', the output's tail) of the tests run in ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [python, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider", *tests]
    proc = subprocess.Popen(
        cmd, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "timeout", ""
    except BaseException:  # Ctrl-C: end the test run too, then let the caller clean up
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    lines = out.decode(errors="replace").strip().splitlines()
    if proc.returncode == 0:
        return "passed", "\n".join(lines[-1:])
    failed = [ln for ln in lines if ln.startswith(("FAILED ", "ERROR "))]  # pytest's short summary
    return "failed", "\n".join(failed[:2] or lines[-3:])


def check_imports(python: str, tree: Path) -> None:
    """The copy's code is what the tests import (not the working tree's, through an editable install)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    probe = "import importlib.util as u, sys; s = u.find_spec(sys.argv[1]); print(s.origin if s else '')"
    for top in ("bot", "memory"):
        if not (tree / top).is_dir():
            continue
        found = subprocess.run([python, "-c", probe, top], cwd=tree, env=env, capture_output=True, text=True)
        origin = found.stdout.strip()
        if not origin or not Path(origin).resolve().is_relative_to(tree.resolve()):
            raise SystemExit(f"mutate: '{top}' is imported from {origin or 'nowhere'}, not from the copy {tree}")


def mutate_one(m: Mutation, tree: Path, python: str, timeout: float) -> Outcome:
    path = tree / m.file
    if not path.is_file():
        return Outcome(m, "stale", detail=f"{m.file} does not exist")
    text = path.read_text(encoding="utf-8")
    n = text.count(m.original)
    if n == 0:
        return Outcome(m, "stale", detail="the original snippet is not in the file")
    if n > 1:
        return Outcome(m, "ambiguous", detail=f"the original snippet occurs {n} times")
    path.write_text(text.replace(m.original, m.replacement), encoding="utf-8")
    started = time.monotonic()
    try:
        result, tail = run_tests(python, tree, m.tests, timeout)
    finally:
        path.write_text(text, encoding="utf-8")
    seconds = time.monotonic() - started
    status = {"failed": "caught", "passed": "missed", "timeout": "timeout"}[result]
    return Outcome(m, status, seconds, tail)  # caught: which test failed; missed: pytest's last line


def line(o: Outcome) -> str:
    m = o.mutation
    notes = ", ".join(x for x in (f"owner: {m.owner}" if m.owner else "", f"#{m.issue}" if m.issue else "") if x)
    head = f"{o.status.upper():9} {m.id:40} {m.file}"
    body = f"{head}\n          {m.description}" + (f" ({notes})" if notes else "")
    if o.seconds:
        body += f" [{o.seconds:.1f} s]"
    if o.detail:
        body += "\n          " + o.detail.replace("\n", "\n          ")
    return body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--list", type=Path, default=DEFAULT_LIST, help="the mutation list (TOML)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the source tree (a git checkout)")
    parser.add_argument("--python", default="", help="the interpreter that runs pytest (default: ROOT/.venv)")
    parser.add_argument("--only", nargs="*", default=[], help="run the mutations whose id starts with one of these")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a test run may take (then: caught)")
    parser.add_argument("--no-baseline", action="store_true", help="skip running the tests on the unchanged copy")
    args = parser.parse_args(argv)

    root = args.root.resolve()
    python = args.python or str(root / ".venv" / "bin" / "python")
    mutations = load(args.list)
    if args.only:
        mutations = [m for m in mutations if any(m.id.startswith(p) for p in args.only)]
    if not mutations:
        print("mutate: no mutation selected", file=sys.stderr)
        return 2
    report = Report()
    with tempfile.TemporaryDirectory(prefix="mutate-") as tmp:
        tree = Path(tmp) / "tree"
        copy_tree(root, tree)
        check_imports(python, tree)
        if not args.no_baseline:
            files = tuple(dict.fromkeys(t for m in mutations for t in m.tests if (tree / t.split("::")[0]).exists()))
            result, tail = run_tests(python, tree, files, args.timeout)
            if result != "passed":
                print(f"mutate: the tests fail without any mutation ({result}):\n{tail}", file=sys.stderr)
                return 3
            print(f"baseline: {len(files)} test files pass unchanged", flush=True)
        for m in mutations:
            outcome = mutate_one(m, tree, python, args.timeout)
            report.outcomes.append(outcome)
            print(line(outcome), flush=True)
    stale = report.count("stale", "ambiguous")
    print(
        f"\nscore: {report.caught} of {report.caught + report.missed} caught ({report.score:.0f}%)"
        + (f"; {stale} stale or ambiguous (not counted)" if stale else "")
    )
    own = Report([o for o in report.outcomes if not o.mutation.owner])
    if len(own.outcomes) < len(report.outcomes):
        print(f"without the rows others own: {own.caught} of {own.caught + own.missed} caught ({own.score:.0f}%)")
    if report.missed:
        return 1
    return 2 if stale else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # the copy is gone already (its context manager); the tree was never written to
        print("\nmutate: interrupted; the working tree is as it was", file=sys.stderr)
        sys.exit(130)
