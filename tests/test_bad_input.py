"""Bad input and a bad disk at the Assistant and Transcript level (the Telegram side: test_e2e_bad_input.py)."""

import errno
import json
import random
import tracemalloc

import pytest

from bot.claude.model import FakeModel
from bot.core.ask import Assistant
from memory import transcript as transcript_module
from memory.recall import RecallIndex
from memory.transcript import Transcript


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
async def test_an_unwritable_data_dir_still_answers_and_says_the_turn_was_not_saved(
    code, assistant: Assistant, transcript: Transcript, monkeypatch
):
    await assistant.ask(1, "first")
    before = transcript.path(1).read_bytes()
    real_write = transcript_module._write_all

    def failing_write(fd, data):  # half the turn reaches the file, then the disk refuses
        real_write(fd, data[: len(data) // 2])
        raise OSError(code, "simulated")

    monkeypatch.setattr(transcript_module, "_write_all", failing_write)
    answer = await assistant.ask(1, "second")
    assert answer.text == "echo: second" and answer.saved is False  # answered, and marked unsaved
    assert transcript.path(1).read_bytes() == before  # the half-written turn was taken back
    monkeypatch.setattr(transcript_module, "_write_all", real_write)  # the disk is fine again
    answer = await assistant.ask(1, "third")
    assert answer.saved is True
    assert [e.data["content"] for e in transcript.read(1)] == ["first", "echo: first", "third", "echo: third"]


def test_lone_surrogates_and_line_separators_keep_one_valid_message_per_line(transcript: Transcript):
    text = "a\ud800b \u2028 c\u2029d\x85e\x00f 👨‍👩‍👧"
    transcript.append(1, [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}])
    raw = transcript.path(1).read_bytes()
    raw.decode("utf-8")  # valid UTF-8
    assert raw.count(b"\n") == 2 and len(raw.decode().splitlines()) == 2  # even str.splitlines sees two lines
    assert [json.loads(line)["content"] for line in raw.splitlines()][0] == text.replace("\ud800", "\ufffd")
    assert [e.data["content"] for e in transcript.read(1)][0] == text.replace("\ud800", "\ufffd")


async def test_a_question_with_a_lone_surrogate_is_sent_and_stored_as_valid_text(
    assistant: Assistant, transcript: Transcript, fake_model: FakeModel
):
    answer = await assistant.ask(1, "깨진 \udc80 글자")
    assert fake_model.calls[-1].messages[-1]["content"] == "깨진 \ufffd 글자"
    assert answer.text == "echo: 깨진 \ufffd 글자"
    assert [e.data["content"] for e in transcript.read(1)] == ["깨진 \ufffd 글자", answer.text]


async def test_a_10_mb_transcript_line_is_read_shortened_and_indexed_with_bounded_memory(
    transcript: Transcript, fake_model: FakeModel, clock, data_dir
):
    rng = random.Random(3)
    words = ["자전거", "자물쇠", "coffee", "garden", "piano", "여행", "부산"]
    tokens = [f"{word}{n}" for word in words for n in range(1000)]  # a word and a number, drawn together
    big = " ".join(rng.choices(tokens, k=1_200_000))[:10_000_000]
    turn = [{"role": "user", "content": f"자물쇠 번호는 4719 {big}"}, {"role": "assistant", "content": "네"}]
    transcript.append(1, turn)
    assert transcript.path(1).stat().st_size > 10_000_000
    recall = RecallIndex(data_dir, build_in="thread")  # the background build in this process, where it is traced
    a = Assistant(transcript=transcript, model=fake_model, now=clock, max_chars=8000, recall=recall)
    tracemalloc.start()
    try:
        answer = await a.ask(1, "자물쇠 번호 뭐였지?")
        await a.maintain(1)
        assert recall.wait_built(120)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        recall.close()
    assert answer.text == "echo: 자물쇠 번호 뭐였지?"
    sent = fake_model.calls[-1].messages
    assert sum(len(json.dumps(m, ensure_ascii=False)) for m in sent) < 12_000  # the window shortened it
    assert sent[0]["content"].startswith("자물쇠 번호는 4719")
    assert peak < 200_000_000  # a bounded multiple of the line (read, decoded, parsed once)
    with RecallIndex(data_dir) as index:  # indexed (its head), and searching it stays cheap
        hits = index.search(1, "4719", 3)
    big_hits = [h for h in hits if h.content.startswith("자물쇠 번호는 4719")]
    assert len(big_hits) == 1 and len(big_hits[0].content) == 20_000  # its head, not 10 MB
