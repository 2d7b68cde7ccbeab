"""The recall index: planted facts found over the whole history, in the right chat only."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
from datetime import date
from pathlib import Path

import pytest

from memory.recall import RecallIndex, related_block
from memory.recall.stem import stem
from memory.recall.text import doc_terms, query_terms
from memory.transcript import Transcript
from tests.conftest import ROOT

FILLER = [
    ("오늘 저녁 뭐 먹을까?", "김치찌개 어때요? 따뜻하고 좋아요."),
    ("What's a good stretch for my back?", "Try a cat-cow stretch, ten slow rounds."),
    ("내일 비 온대?", "오후에 비 소식이 있어요, 우산 챙기세요."),
    ("Remind me how to boil an egg", "Nine minutes for hard-boiled, then cold water."),
    ("주말에 볼 영화 추천해줘", "잔잔한 영화로 '리틀 포레스트' 어때요?"),
]


def msg(role: str, content: str, at: str = "2026-11-01T10:00:00+09:00", **extra):
    return {"role": role, "content": content, "at": at, **extra}


def filler(transcript: Transcript, chat: str, turns: int, day: int = 1) -> None:
    batch = []
    for i in range(turns):
        q, a = FILLER[i % len(FILLER)]
        at = f"2026-11-{day:02d}T{10 + (i % 10):02d}:00:00+09:00"
        batch += [msg("user", f"{q} ({i})", at), msg("assistant", a, at)]
    transcript.append(chat, batch)


@pytest.fixture
def index(data_dir: Path):
    idx = RecallIndex(data_dir)
    yield idx
    idx.close()


def lines_of(hits) -> list[tuple[str | None, int]]:
    return [(h.file, h.line) for h in hits]


# -- the planted fact ---------------------------------------------------------------------------


def test_fact_from_300_turns_ago_is_found_in_its_chat_and_never_in_another(transcript, index):
    transcript.append("alice", [msg("user", "현관 자물쇠 번호를 4719로 바꿨어"), msg("assistant", "4719, 기억할게요.")])
    filler(transcript, "alice", 300)
    filler(transcript, "bob", 300)
    hits = index.search("alice", "자물쇠 번호가 뭐였지?", 5)
    assert hits[0].line == 1 and "4719" in hits[0].content and hits[0].file is None
    assert hits[0].context and hits[0].context[0].line == 2  # the answer completes the exchange
    for query in ("자물쇠 번호가 뭐였지?", "4719", "자물쇠"):
        assert all("4719" not in h.content and "자물쇠" not in h.content for h in index.search("bob", query, 10))
    assert index.search("bob", "4719", 10) == []


def test_archived_transcripts_are_searched(transcript, index, data_dir):
    transcript.append("c", [msg("user", "My passport number ends in 5521"), msg("assistant", "Noted: 5521.")])
    filler(transcript, "c", 3)
    index.sync("c")
    archived = transcript.archive("c", "20261101T000000Z")
    transcript.append("c", [msg("user", "새 대화 시작"), msg("assistant", "네, 새로 시작해요.")])
    hits = index.search("c", "passport number", 3)
    assert hits[0].file == archived.name and hits[0].line == 1
    # the live transcript is searched too, with its own line numbers
    assert lines_of(index.search("c", "새 대화", 1)) == [(None, 1)]


def test_an_archive_never_indexed_while_live_is_found(transcript, data_dir):
    transcript.append("c", [msg("user", "the boat is called Seagull"), msg("assistant", "Seagull, lovely.")])
    transcript.archive("c", "20261101T000000Z")
    with RecallIndex(data_dir) as idx:
        hits = idx.search("c", "boat name", 2)
    assert hits and hits[0].file == "c.20261101T000000Z.jsonl"


def test_before_leaves_out_what_is_sent_verbatim_but_never_archives(transcript, index):
    transcript.append("c", [msg("user", "the wifi password is tulip77"), msg("assistant", "Got it.")])
    transcript.archive("c", "20261101T000000Z")
    transcript.append("c", [msg("user", "old note: tulip77 again"), msg("assistant", "ok")])
    recent = transcript.append("c", [msg("user", "wifi tulip77 newest"), msg("assistant", "ok")])
    hits = index.search("c", "tulip77", 10, before=recent[0].offset)
    assert (None, 3) not in lines_of(hits)
    assert (None, 1) in lines_of(hits) and ("c.20261101T000000Z.jsonl", 1) in lines_of(hits)
    assert (None, 3) in lines_of(index.search("c", "tulip77", 10))


# -- the automatic block ------------------------------------------------------------------------


def test_automatic_recall_is_empty_for_greetings_and_unknown_topics(transcript, index):
    transcript.append("c", [msg("user", "안녕! hi there"), msg("assistant", "안녕하세요! Hello!")])
    transcript.append("c", [msg("user", "내 강아지 이름은 보리야"), msg("assistant", "보리, 귀여운 이름이네요.")])
    filler(transcript, "c", 20)
    for text in ("hi", "안녕", "안녕하세요", "hello!", "thanks", "고마워", "ㅋㅋㅋ", "ok", "quantum chromodynamics"):
        assert index.related("c", text) == [], text
    assert related_block(index.related("c", "hi"), "Asia/Seoul") is None
    hits = index.related("c", "우리 강아지 이름 기억나?")
    assert hits and "보리" in hits[0].content
    block = related_block(hits, "Asia/Seoul")
    assert block is not None and block.startswith("[관련 기억 / Related memories]")
    assert "2026-11-01 10:00 user: 내 강아지 이름은 보리야" in block
    assert "assistant: 보리, 귀여운 이름이네요." in block


def test_block_dates_are_in_the_given_zone_and_names_say_who(transcript, index):
    transcript.append(
        "g",
        [
            msg("user", "민수: 회의실 예약은 목요일 3시", at="2026-11-01T01:00:00+00:00", name="민수"),
            msg("assistant", "목요일 3시로 예약해 둘게요.", at="2026-11-01T01:00:05+00:00"),
        ],
    )
    block = related_block(index.related("g", "회의실 예약"), "Asia/Seoul")
    assert "2026-11-01 10:00 user (민수): 민수: 회의실 예약은 목요일 3시" in block
    assert "2026-11-01 01:00 user (민수)" in related_block(index.related("g", "회의실 예약"), "UTC")


# -- the index itself ---------------------------------------------------------------------------


def test_rebuilt_index_gives_the_same_results(transcript, data_dir):
    transcript.append("c", [msg("user", "보험 갱신일은 3월 14일"), msg("assistant", "3월 14일, 기억할게요.")])
    filler(transcript, "c", 40)
    transcript.archive("c", "20261101T000000Z")
    filler(transcript, "c", 40, day=2)
    queries = ["보험 갱신", "비 우산", "egg minutes", "영화 추천", "stretch back"]
    with RecallIndex(data_dir) as idx:
        before = [[h.to_json() for h in idx.search("c", q, 10)] for q in queries]
    for p in data_dir.glob("recall.sqlite3*"):
        p.unlink()
    with RecallIndex(data_dir) as idx:
        after = [[h.to_json() for h in idx.search("c", q, 10)] for q in queries]
    assert after == before and all(before)


def test_a_corrupt_index_is_rebuilt(transcript, data_dir):
    transcript.append("c", [msg("user", "the spare key is under the blue pot"), msg("assistant", "Noted.")])
    with RecallIndex(data_dir) as idx:
        idx.sync("c")
    (data_dir / "recall.sqlite3").write_bytes(b"this is not a database" * 100)
    for p in data_dir.glob("recall.sqlite3-*"):
        p.unlink()
    with RecallIndex(data_dir) as idx:
        assert idx.search("c", "spare key", 1)[0].line == 1


def test_index_is_private_and_sync_is_incremental(transcript, index, data_dir):
    transcript.append("c", [msg("user", "one"), msg("assistant", "two")])
    assert index.sync("c") == 2
    assert index.sync("c") == 0
    transcript.append("c", [msg("user", "three apples"), msg("assistant", "four pears")])
    assert index.sync("c") == 2
    assert stat.S_IMODE(os.stat(data_dir / "recall.sqlite3").st_mode) == 0o600
    mode = sqlite3.connect(data_dir / "recall.sqlite3").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_a_replaced_transcript_is_indexed_again(transcript, index, data_dir):
    transcript.append("c", [msg("user", "the old secret is marigold"), msg("assistant", "ok")])
    assert index.search("c", "marigold", 1)
    path = transcript.path("c")
    path.unlink()  # replaced by another file (not an archive rename)
    transcript.append("c", [msg("user", "a new start with sunflower"), msg("assistant", "ok")])
    assert index.search("c", "marigold", 5) == []
    assert index.search("c", "sunflower", 1)[0].line == 1


def test_line_numbers_count_every_physical_line(transcript, index, data_dir):
    path = transcript.path("c")
    path.parent.mkdir(parents=True, exist_ok=True)
    good = [json.dumps(msg("user", f"line {w}")) for w in ("alpha", "bravo")]
    path.write_text(good[0] + "\n{not json\n\n" + json.dumps({"role": "x"}) + "\n" + good[1] + '\n{"role": "us')
    assert index.search("c", "bravo", 1)[0].line == 5
    transcript.append("c", [msg("user", "line charlie"), msg("assistant", "ok")])  # the torn line is closed
    assert index.search("c", "charlie", 1)[0].line == 7
    assert index.search("c", "alpha", 1)[0].line == 1


def test_a_retried_question_supersedes_the_earlier_answer(transcript, index):
    transcript.append("c", [msg("user", "best hiking trail nearby?"), msg("assistant", "The ridge walk (old answer).")])
    transcript.append(
        "c", [msg("user", "best hiking trail nearby?", retry=True), msg("assistant", "The lake loop is nicer.")]
    )
    hits = index.search("c", "hiking trail", 10)
    found = lines_of(hits)
    assert found[0] in ((None, 3), (None, 4))  # the live question or its answer (ranked above a question)
    assert (None, 3) in found and (None, 1) not in found
    assert all("old answer" not in h.content for h in hits)


def test_korean_two_syllable_queries_find_words_with_particles(transcript, index):
    transcript.append(
        "c",
        [
            msg("user", "자물쇠는 현관에 있고 번호를 바꿨어"),
            msg("assistant", "사과를 세 개 샀어요"),
            msg("user", "집에 가는 길에 우유 사 와"),
            msg("assistant", "네, 우유는 저지방으로요."),
        ],
    )
    assert index.search("c", "번호", 1)[0].line == 1
    assert index.search("c", "자물쇠가 어디 있지", 1)[0].line == 1
    assert index.search("c", "사과", 1)[0].line == 2
    assert index.search("c", "우유를", 2)[0].line in (3, 4)
    assert index.search("c", "집", 1)[0].line == 3  # one syllable: a prefix of 집에
    assert "번호" in doc_terms("번호를") and [t.text for t in query_terms("번호를")] == ["번호"]


@pytest.mark.parametrize(
    "query",
    ['"', "*", "NEAR(", "NEAR(a b", "OR", "AND", "NOT", "a OR", '"unterminated', "col:term", "body:x", "(", ")",
     "^", "-", "+", "'", "", "   ", "?!.,", "\x00", "a" * 5000, "🙂🙂", "NEAR(\"x\" \"y\", 2)", "{body}: x", "x*"],
)  # fmt: skip
def test_bad_queries_never_raise(transcript, index, query):
    transcript.append("c", [msg("user", "near the river, or the sea"), msg("assistant", "a body of water")])
    assert isinstance(index.search("c", query, 5), list)
    assert isinstance(index.related("c", query), list)


def test_unknown_chat_and_empty_chat(index):
    assert index.search("nobody", "anything", 5) == []
    assert index.sync("nobody") == 0


def test_a_named_date_brings_that_days_turns_first(transcript, index):
    transcript.append("c", [msg("user", "we went hiking at the coast", at="2023-05-07T10:00:00+00:00"),
                            msg("assistant", "lovely", at="2023-05-07T10:01:00+00:00")])  # fmt: skip
    transcript.append("c", [msg("user", "we went hiking at the coast", at="2023-08-07T10:00:00+00:00"),
                            msg("assistant", "again!", at="2023-08-07T10:01:00+00:00")])  # fmt: skip
    assert index.search("c", "hiking in May 2023", 1)[0].line == 1
    assert index.search("c", "hiking in August 2023", 1)[0].line == 3
    assert index.search("c", "hiking", 1)[0].line == 3  # the newer of two equal matches
    assert index.search("c", "what happened on 2023-05-07", 1)[0].line in (1, 2)
    # relative dates count from ``today``; 하이킹 is not a stored word, so only the date can match
    assert index.search("c", "지난주 하이킹", 1, today=date(2023, 5, 10))[0].line in (1, 2)
    assert index.search("c", "지난주 하이킹", 1, today=date(2026, 11, 30)) == []


def test_threads_share_one_index(transcript, index):
    from concurrent.futures import ThreadPoolExecutor

    for chat in ("a", "b", "c", "d"):
        transcript.append(chat, [msg("user", f"secret of {chat} is {chat}xyz"), msg("assistant", "ok")])
        filler(transcript, chat, 30)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda c: index.search(c, f"{c}xyz", 1)[0].content, ["a", "b", "c", "d"] * 5))
    assert results == [f"secret of {c} is {c}xyz" for c in ["a", "b", "c", "d"] * 5]


# -- two processes -------------------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from memory.recall import RecallIndex
    from memory.transcript import Transcript
    data, name, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    t = Transcript(data)
    idx = RecallIndex(data)
    for i in range(n):
        t.append("shared", [{"role": "user", "content": f"{name} note{i} token{name}{i}", "at": "2026-11-01T10:00:00Z"},
                            {"role": "assistant", "content": f"ack {name}{i}", "at": "2026-11-01T10:00:01Z"}])
        idx.sync("shared")
    idx.close()
    """
)
SYNCER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from memory.recall import RecallIndex
    data, stop = Path(sys.argv[1]), Path(sys.argv[2])
    idx = RecallIndex(data)
    while not stop.exists():
        idx.sync("shared")
    idx.close()
    """
)


def test_concurrent_appends_from_two_processes_are_all_indexed(data_dir, transcript, tmp_path):
    """Two processes append and index turn by turn while two more index as fast as they can."""
    transcript.append("shared", [msg("user", "start"), msg("assistant", "ok")])
    n = 40
    stop = tmp_path / "stop"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    syncers = [
        subprocess.Popen([sys.executable, "-c", SYNCER, str(data_dir), str(stop)], env=env, cwd=ROOT) for _ in range(2)
    ]
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(data_dir), name, str(n)], env=env, cwd=ROOT)
        for name in ("p", "q")
    ]
    try:
        assert [p.wait(timeout=120) for p in writers] == [0, 0]
    finally:
        stop.touch()
        assert [p.wait(timeout=60) for p in syncers] == [0, 0]
    file_lines = {
        i + 1: json.loads(raw)["content"]
        for i, raw in enumerate(transcript.path("shared").read_text(encoding="utf-8").splitlines())
    }
    db = sqlite3.connect(data_dir / "recall.sqlite3")
    indexed = db.execute("SELECT line, content FROM turns ORDER BY line").fetchall()
    db.close()
    assert indexed == sorted(file_lines.items()) and len(indexed) == 2 + 4 * n  # each line once
    with RecallIndex(data_dir) as idx:
        assert idx.sync("shared") == 0
        for name in ("p", "q"):
            for i in (0, n // 2, n - 1):
                hit = idx.search("shared", f"token{name}{i}", 1)[0]
                assert file_lines[hit.line] == f"{name} note{i} token{name}{i}"


def test_stemmer_examples():
    pairs = {"researching": "research", "researched": "research", "paintings": "paint", "adoption": "adopt",
             "ponies": "poni", "relational": "relat", "hopping": "hop", "agreed": "agre", "sky": "sky"}  # fmt: skip
    assert {w: stem(w) for w in pairs} == pairs


def test_hit_lines_show_date_and_who_best_first(transcript, index):
    from memory.recall import hit_lines

    transcript.append("c", [msg("user", "the vet appointment is on Friday " + "x" * 300, at="2026-11-01T01:00:00Z"),
                            msg("assistant", "Friday vet, noted.", at="2026-11-01T01:00:05Z")])  # fmt: skip
    lines = hit_lines(index.search("c", "vet appointment", 2), "Asia/Seoul", width=60)
    assert lines[0].startswith("2026-11-01 10:00 user: the vet appointment is on Friday")
    assert len(lines[0]) <= len("2026-11-01 10:00 user: ") + 60 and lines[0].endswith("…")
    assert lines[1] == "2026-11-01 10:00 assistant: Friday vet, noted."


def test_an_index_of_another_version_is_rebuilt(transcript, data_dir):
    transcript.append("c", [msg("user", "the boiler was serviced by Kim"), msg("assistant", "Noted.")])
    with RecallIndex(data_dir) as idx:
        idx.sync("c")
    db = sqlite3.connect(data_dir / "recall.sqlite3")
    db.execute("UPDATE meta SET value='0' WHERE key='version'")
    db.execute("DELETE FROM turns")  # what an older version left would not be trusted anyway
    db.commit()
    db.close()
    with RecallIndex(data_dir) as idx:
        assert idx.search("c", "boiler serviced", 1)[0].line == 1
    db = sqlite3.connect(data_dir / "recall.sqlite3")
    assert db.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0] != "0"
    db.close()
