"""The crash suite (bench/kill_suite.py), reduced: workers SIGKILLed at random moments, every file checked after."""

import pytest

from bench.kill_suite import run


@pytest.mark.slow
def test_sigkill_at_random_moments_leaves_every_file_valid_and_every_acknowledged_turn_stored(tmp_path):
    report = run(30, seed=7, root=tmp_path, quiet=True)
    assert report.failures == []
    assert report.kills == 30
    assert report.counts["turns acknowledged"] > 0 and report.checks["acknowledged turn stored"] > 0
    # the checks ran on real work: summaries, facts and the recall index were there to check
    assert report.checks["summary file valid"] > 0 and report.checks["facts file valid"] > 0
    assert report.checks["recall equals a fresh rebuild"] == report.cycles
