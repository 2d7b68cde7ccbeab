"""scripts/mutate.py on a tiny git repository: one mutation its test catches, one it misses, one whose
snippet is gone (stale); the working tree is left as it was, and a failing baseline stops the run."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

SOURCE = """def add(a, b):
    return a + b


def scale(x):
    return x * 2
"""
TEST = """from calc import add


def test_add():
    assert add(2, 3) == 5
"""
LIST = """
[[mutation]]
id = "add-subtracts"
file = "calc.py"
original = '''return a + b'''
replacement = '''return a - b'''
tests = ["test_calc.py"]
description = "add subtracts"

[[mutation]]
id = "scale-triples"
file = "calc.py"
original = '''return x * 2'''
replacement = '''return x * 3'''
tests = ["test_calc.py::test_add"]
description = "scale is not tested"
owner = "someone-else"

[[mutation]]
id = "gone"
file = "calc.py"
original = '''return a * b'''
replacement = '''return a / b'''
tests = ["test_calc.py"]
description = "the code moved on"
"""


def load_script():
    spec = importlib.util.spec_from_file_location("mutate", ROOT / "scripts" / "mutate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutate"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "calc.py").write_text(SOURCE)
    (root / "test_calc.py").write_text(TEST)
    (root / "mutations.toml").write_text(LIST)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "calc.py"], cwd=root, check=True)  # test_calc.py stays untracked: copied too
    subprocess.run([*git, "commit", "-qm", "calc"], cwd=root, check=True)
    return root


def run(repo: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    mutate = load_script()
    args = ["--root", str(repo), "--list", str(repo / "mutations.toml"), "--python", sys.executable, *extra]
    code = mutate.main(args)
    return code, capsys.readouterr().out


def test_caught_missed_and_stale_are_reported_and_the_tree_is_untouched(repo: Path, capsys):
    code, out = run(repo, capsys)
    assert code == 1  # something was missed
    status = {ln.split()[1]: ln.split()[0] for ln in out.splitlines() if ln[:1].isupper() and len(ln.split()) > 2}
    assert status == {"add-subtracts": "CAUGHT", "scale-triples": "MISSED", "gone": "STALE"}
    assert "FAILED test_calc.py::test_add" in out  # which test caught it
    assert "score: 1 of 2 caught (50%); 1 stale or ambiguous (not counted)" in out
    assert "without the rows others own: 1 of 1 caught (100%)" in out
    assert (repo / "calc.py").read_text() == SOURCE  # the working tree was never written to
    assert not (repo / "__pycache__").exists()


def test_only_and_a_failing_baseline(repo: Path, capsys):
    code, out = run(repo, capsys, "--only", "add-")
    assert code == 0 and "score: 1 of 1 caught (100%)" in out and "scale-triples" not in out
    (repo / "calc.py").write_text(SOURCE.replace("a + b", "a + b + 1"))  # the tests fail unchanged
    code, out = run(repo, capsys, "--only", "gone")
    assert code == 3 and "CAUGHT" not in out


def test_a_malformed_list_is_refused(tmp_path: Path):
    mutate = load_script()
    bad = tmp_path / "bad.toml"
    bad.write_text('[[mutation]]\nid = "x"\nfile = "a.py"\noriginal = "a"\nreplacement = "a"\ntests = ["t.py"]\n'
                   'description = "no change"\n')  # fmt: skip
    with pytest.raises(ValueError, match="the replacement is the original"):
        mutate.load(bad)
    assert len(mutate.load(ROOT / "scripts" / "mutations.toml")) >= 30  # the project's own list parses


def test_ctrl_c_ends_the_test_run_removes_the_copy_and_leaves_the_tree(repo: Path, tmp_path: Path):
    """Interrupted while a mutation's tests run (they hold until told): the run's pytest is ended, the
    temporary copy removed, the working tree as it was; exit status 130."""
    import os
    import signal
    import time

    (repo / "test_calc.py").write_text(
        "import os, time\n\nfrom calc import add\n\n\ndef test_add():\n"
        "    open(os.environ['PID_FILE'], 'w').write(str(os.getpid()))\n"
        "    while not os.path.exists(os.environ['GO_FILE']):\n        time.sleep(0.01)\n"
        "    assert add(2, 3) == 5\n"
    )
    temp = tmp_path / "tmp"
    temp.mkdir()
    pid_file = tmp_path / "pid"
    env = {**os.environ, "TMPDIR": str(temp), "PID_FILE": str(pid_file), "GO_FILE": str(tmp_path / "go")}
    cmd = [sys.executable, str(ROOT / "scripts" / "mutate.py"), "--root", str(repo), "--no-baseline"]
    cmd += ["--list", str(repo / "mutations.toml"), "--python", sys.executable, "--only", "add-"]
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a test runner may ignore it
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60  # a hang guard only
        while not pid_file.exists() or not pid_file.read_text():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        mutated = list(temp.glob("mutate-*/tree/calc.py"))
        assert len(mutated) == 1 and "a - b" in mutated[0].read_text()  # the mutation's tests are running
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid_file.read_text()), 0)  # the mutation's test run was ended too
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        (tmp_path / "go").touch()  # a test run left behind (a broken script) finishes by itself
    assert proc.returncode == 130 and b"interrupted" in out
    assert list(temp.iterdir()) == []  # the copy is gone
    assert (repo / "calc.py").read_text() == SOURCE
