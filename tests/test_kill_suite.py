"""The crash suite (bench/kill_suite.py), reduced: workers SIGKILLed at random moments, every file checked after."""

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import kill_suite
from bench.kill_suite import run
from tests.conftest import ROOT
from tests.forkserver import ForkedProcess, ForkServer

WORKER_IMPORTS = (
    "memory.facts",
    "memory.memo",
    "memory.pending",
    "memory.recall",
    "memory.summary",
    "memory.summary_store",
    "memory.transcript",
    "memory.turns",
    "bot.claude.model",
    "bot.core.ask",
)
"""What a worker (``python -m bench.kill_suite --worker``) imports before it says it is ready."""


@pytest.fixture
def forked_workers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The suite's workers forked from a server that has imported their modules once, instead of 30
    fresh interpreters importing them (~0.4 s of CPU each). A worker is still its own process, run
    as ``python -m bench.kill_suite --worker ...`` with the test's environment, killed by its pid: the
    files it leaves are what the suite checks, however the process was made."""
    env = dict(os.environ)
    server = ForkServer.private(env, WORKER_IMPORTS)
    if server is None:  # TEST_FORKSERVER=0: the suite's own subprocess.Popen
        yield
        return

    def start(data_dir: Path, name: str, run: int, seed: int) -> ForkedProcess:
        args = ["--worker", str(data_dir), name, str(run), str(seed)]
        with open(data_dir.parent / "workers.log", "ab") as log, open(os.devnull, "rb") as devnull:
            return server.spawn(
                args, env, ROOT, stdin=devnull.fileno(), stdout=subprocess.PIPE, stderr=log.fileno(),
                module="bench.kill_suite",
            )  # fmt: skip

    monkeypatch.setattr(kill_suite, "_start", start)
    try:
        yield
    finally:
        server.close()


@pytest.mark.slow
def test_sigkill_at_random_moments_leaves_every_file_valid_and_every_acknowledged_turn_stored(tmp_path, forked_workers):
    report = run(30, seed=7, root=tmp_path, quiet=True)
    assert report.failures == []
    assert report.kills == 30
    assert report.counts["turns acknowledged"] > 0 and report.checks["acknowledged turn stored"] > 0
    # the checks ran on real work: summaries, facts and the recall index were there to check
    assert report.checks["summary file valid"] > 0 and report.checks["facts file valid"] > 0
    assert report.checks["recall equals a fresh rebuild"] == report.cycles
