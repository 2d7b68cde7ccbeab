"""``python -m bot doctor``'s access check: the owner, the list, the limits; a bad access.json is a problem."""

import json

from tests.test_doctor import env_for, lines_of, run_doctor, statuses


def test_no_owner_yet_points_to_pairing(data_dir):
    rc, lines = run_doctor(env_for(data_dir), "--offline", "--only", "access")
    assert rc == 0, lines
    assert statuses(lines, "access") == {"ok"}
    (line,) = lines_of(lines, "access")
    assert "no owner yet" in line and "/start <code>" in line and "50 questions, 200,000 tokens" in line
    assert not data_dir.exists()  # the doctor only looks


def test_the_paired_owner_and_the_list(data_dir):
    data_dir.mkdir()
    access = {"owner": {"id": 7, "since": "2026-11-29T23:05:00+09:00", "via": "pairing"},
              "users": {"8": {}, "9": {}}, "groups": {"-100": {"title": "Family"}}}  # fmt: skip
    (data_dir / "access.json").write_text(json.dumps(access))
    rc, lines = run_doctor(env_for(data_dir, DAILY_TOKEN_LIMIT="0"), "--offline", "--only", "access")
    assert rc == 0, lines
    (line,) = lines_of(lines, "access")
    assert "owner 7 (paired); 2 more people, 1 open group; daily limits: 50 questions, no token limit" in line


def test_a_bad_access_file_is_a_problem(data_dir):
    data_dir.mkdir()
    (data_dir / "access.json").write_text("{torn")
    (data_dir / "usage.json").write_text("{torn")
    rc, lines = run_doctor(env_for(data_dir, OWNER_ID="5"), "--offline", "--only", "access")
    assert rc != 0
    assert statuses(lines, "access") == {"problem"} and "access.json is not valid JSON" in lines_of(lines, "access")[0]
    (data_dir / "access.json").unlink()
    rc, lines = run_doctor(env_for(data_dir, OWNER_ID="5"), "--offline", "--only", "access")
    assert statuses(lines, "access") == {"ok", "note"} and "owner 5 (OWNER_ID or ALLOWED_USERS)" in lines[0]
    assert (data_dir / "usage.json").read_text() == "{torn"  # looked at, not moved
