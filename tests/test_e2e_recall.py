"""End to end: recall in the real bot process — the related-memories block, /search, the index file."""

import json
import stat

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.telegram_server import FakeTelegram
from tests.helpers import convo, turn_context

CHAT = 7373


def write_history(data_dir, chat_id: int, turns: list[tuple[str, str, str]]) -> None:
    chats = data_dir / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    with open(chats / f"{chat_id}.jsonl", "a", encoding="utf-8") as f:
        for at, q, a in turns:
            f.write(json.dumps({"role": "user", "content": q, "at": at}, ensure_ascii=False) + "\n")
            f.write(json.dumps({"role": "assistant", "content": a, "at": at}, ensure_ascii=False) + "\n")


def ask(tg: FakeTelegram, text: str, chat_id: int = CHAT, **kw) -> str:
    before = len(tg.visible(chat_id))
    tg.send_text(chat_id, text, **kw)
    return tg.wait_visible(chat_id, before + 1)[before]


def test_recall_and_search_in_the_bot(start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir):
    old = [("2026-05-02T19:30:00+09:00", "어머니 생신 선물로 진주 목걸이 샀어, 38만 원", "좋은 선물이네요!")]
    chatter = [(f"2026-06-{d:02d}T12:00:00+09:00", f"점심 뭐 먹을까 {d}", f"김밥 어때요 {d}") for d in range(1, 29)]
    write_history(data_dir, CHAT, old + chatter)
    # a data directory without an index yet (the fake has no flood limit: no second between two messages)
    start_bot(STREAM_INTERVAL="0.1", MAX_HISTORY_MESSAGES="6", TELEGRAM_RATE_FACTOR="20")
    listing = ask(fake_telegram, "/search 목걸이")
    assert "2026-05-02" in listing and "진주 목걸이" in listing
    assert "Add the words" in ask(fake_telegram, "/search", language_code="en")
    fake_anthropic.reply("38만 원이었어요.")
    assert ask(fake_telegram, "어머니 선물 목걸이 얼마였지?") == "38만 원이었어요."
    system = turn_context(fake_anthropic.requests[-1])
    assert "[관련 기억 / Related memories]" in system and "38만 원" in system
    assert "진주" not in json.dumps(convo(fake_anthropic.requests[-1]), ensure_ascii=False)
    index = data_dir / "recall.sqlite3"
    assert index.exists() and stat.S_IMODE(index.stat().st_mode) == 0o600
    assert len(fake_anthropic.requests) == 1  # /search never reached the model


def test_search_by_meaning_in_the_bot(start_bot, fake_telegram: FakeTelegram, data_dir):
    """The real model in the real bot: the vectors are made in the background after a question,
    then /search finds the turn that says it in other words."""
    import sqlite3

    from bench.recall_persona import SMALL

    # a chat long enough to be compared around its mean (memory.recall.meaning.CENTRE_MIN), the only way
    # the real model tells related from unrelated: everyday small talk, and one flight
    small = [s.format(o="Sam") for s in SMALL]
    chatter = [(f"2026-06-{1 + i % 28:02d}T12:00:00+09:00", f"{small[(2 * i) % len(small)]} ({i})",
                f"{small[(2 * i + 1) % len(small)]} ({i})") for i in range(50)]  # fmt: skip
    flight = [
        ("2026-05-02T19:30:00+09:00", "I booked my flight to Tokyo for April", "Exciting, is it your first time?")
    ]
    history = chatter[:25] + flight + chatter[25:]
    write_history(data_dir, CHAT, history)
    start_bot(RECALL_MEANING="on", TELEGRAM_RATE_FACTOR="20")
    question = "/search When is my trip to Japan?"  # not a word of the flight's turn
    first = ask(fake_telegram, question, language_code="en")  # answered at once, by words; the vectors follow
    assert "Nothing related to 'When is my trip to Japan?'" in first

    def vectors() -> int:
        with sqlite3.connect(data_dir / "recall.sqlite3", timeout=30) as conn:
            return conn.execute("SELECT count(*) FROM vecs").fetchone()[0]

    fake_telegram.wait_for(lambda: vectors() == 2 * len(history), timeout=120)
    assert "flight to Tokyo" in ask(fake_telegram, question, language_code="en")
