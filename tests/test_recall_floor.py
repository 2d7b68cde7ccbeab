"""The relevance floor: a search brings only what is related to the query by its words or their meaning,
and says plainly when nothing is (/search, the search_memory tool, ``python -m bot search``); the
automatic recall adds nothing then."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bot.claude.model import FakeModel, tool_call
from bot.commands.search import search_text
from bot.core.ask import Assistant
from memory.recall import RecallIndex
from memory.recall.tuning import Weights
from memory.transcript import Transcript
from tests.conftest import ROOT
from tests.fakes.messages_rules import validate
from tests.helpers import recalled
from tests.test_recall_meaning import CONCEPTS, DIM, ConceptEmbedder, msg


class WordsEmbedder(ConceptEmbedder):
    """ConceptEmbedder (whose texts naming no concept are all one vector) with every other word on a
    dimension of its own: texts sharing no word and no concept are nearly orthogonal, as unrelated
    sentences are for a real model once a chat's common part is taken away."""

    floor = 0.3
    WORDS = 64

    def _vector(self, text: str) -> Any:
        v = np.full(DIM + self.WORDS, 0.01, dtype=np.float32)
        for word in "".join(c if c.isalpha() else " " for c in text.lower()).split():
            if word in CONCEPTS:
                v[CONCEPTS[word]] += 1.0
            else:
                v[DIM + zlib.crc32(word.encode()) % self.WORDS] += 0.3
        return v / np.linalg.norm(v)


@pytest.fixture
def transcript(data_dir: Path) -> Transcript:
    return Transcript(data_dir)


def pals(transcript: Transcript, chat: str = "7") -> None:
    """A puppy, a soup, a flight, and friendly small talk ("pal", "buddy")."""
    transcript.append(chat, [
        msg("user", "We adopted a puppy last week, she chews everything"),
        msg("assistant", "Congratulations! What's her name?"),
        msg("user", "Bori, she is tiny"),
        msg("assistant", "Send photos!"),
        msg("user", "Mom made kimchi soup for dinner"),
        msg("assistant", "That sounds cozy."),
        msg("user", "I booked my flight to Tokyo for April"),
        msg("assistant", "Exciting, is it your first time?"),
    ])  # fmt: skip
    transcript.append(chat, [msg("user" if i % 2 else "assistant", f"Cheers pal, talk soon buddy ({i})")
                             for i in range(10)])  # fmt: skip


def test_a_chat_that_never_spoke_of_zebras_finds_nothing_for_them(transcript, data_dir):
    pals(transcript)
    with RecallIndex(data_dir, meaning=WordsEmbedder()) as index:
        index.sync("7")
        index.embed("7")
        assert index.search("7", "zebra", 8) == []
        assert index.search("7", "Where did I see a zebra?", 8) == []
        assert index.related("7", "zebra", 5) == []  # the automatic recall: nothing either


def test_what_is_related_by_meaning_comes_back_with_its_exchange_and_nothing_else(transcript, data_dir):
    pals(transcript)
    with RecallIndex(data_dir, meaning=WordsEmbedder()) as index:
        index.sync("7")
        index.embed("7")
        hits = index.search("7", "Would she need a leash?", 8)
    # the puppy, the friend's question about it and its answer; not the soup, the flight, the small talk
    assert [h.content for h in hits][:1] == ["We adopted a puppy last week, she chews everything"]
    assert {h.content for h in hits} <= {"We adopted a puppy last week, she chews everything",
                                        "Congratulations! What's her name?", "Bori, she is tiny"}  # fmt: skip
    with RecallIndex(data_dir, meaning=WordsEmbedder(), weights=Weights(floor=False)) as unfloored:
        assert len(unfloored.search("7", "Would she need a leash?", 8)) > len(hits)  # what the floor left out


def test_a_query_with_words_the_chat_never_said_needs_more_than_one_common_word(transcript, data_dir):
    transcript.append("c", [msg("user", "my favourite song is Yellow"), msg("assistant", "Great song!")])
    transcript.append("c", [msg("user", f"what a day, chat number {i}") for i in range(30)])
    with RecallIndex(data_dir) as index:
        assert index.search("c", "favourite cocktail recipe", 5) == []  # never spoke of cocktails or recipes
        assert index.related("c", "a favourite cocktail recipe with gin?", 5) == []  # nor the automatic recall
        assert "Yellow" in index.related("c", "what was my favourite song?", 5)[0].content
        assert "Yellow" in index.search("c", "favourite song", 5)[0].content
        assert "Yellow" in index.search("c", "favourite", 5)[0].content  # every word said: any match counts
        # one word of three, all said in the chat: a keyword search still lists it
        assert "Yellow" in index.search("c", "favourite day chat", 5)[-1].content or any(
            "Yellow" in h.content for h in index.search("c", "favourite day chat", 10)
        )


def test_scores_are_on_one_scale_across_questions(transcript, data_dir):
    transcript.append("c", [msg("user", "the locker code is 4719"), msg("assistant", "noted")])
    transcript.append("c", [msg("user", "our tent is the green one"), msg("assistant", "got it")])
    transcript.append("c", [msg("user", f"small talk {i}") for i in range(20)])
    with RecallIndex(data_dir) as index:
        one = index.search("c", "locker", 1)[0].score
        two = index.search("c", "locker code", 1)[0].score
        tent = index.search("c", "green tent", 1)[0].score
    # a turn holding every word of the query scores about 1 whatever the number and rarity of the words
    assert all(0.5 < s < 2.5 for s in (one, two, tent))
    assert max(one, two, tent) / min(one, two, tent) < 1.6


# -- the front ends -----------------------------------------------------------------------------


@pytest.fixture
def assistant(transcript: Transcript, clock, data_dir):
    yield from recalling(transcript, clock, data_dir, pals, "1", WordsEmbedder())


def recalling(
    transcript: Transcript, clock: Any, data_dir: Path, fill: Callable[[Transcript, str], None], chat: str,
    meaning: Any = None,
) -> Iterator[tuple[Assistant, FakeModel]]:  # fmt: skip
    """An Assistant over a chat ``fill`` wrote, its index made (and its vectors, with ``meaning``), and its model."""
    model = FakeModel(validate=validate)
    index = RecallIndex(data_dir, meaning=meaning)
    fill(transcript, chat)
    index.sync(chat)
    index.embed(chat)
    yield Assistant(transcript=transcript, model=model, now=clock, recall=index, max_messages=4, max_chars=2000), model
    index.close()


async def test_the_search_memory_tool_tells_the_model_nothing_was_found(assistant):
    a, model = assistant
    model.queue(tool_call("search_memory", {"query": "zebra sightings"}), "Nothing about zebras.")
    await a.ask(1, "Did I ever see a zebra?")
    result = model.calls[1].messages[-1]["content"][0]
    assert result["type"] == "tool_result" and not result.get("is_error")
    assert result["content"].startswith("nothing found: no earlier message of this chat is related to 'zebra")
    model.queue(tool_call("search_memory", {"query": "leash"}), "The puppy.")
    await a.ask(1, "What did I say about my dog?")
    assert "puppy" in model.calls[-1].messages[-1]["content"][0]["content"]


async def test_search_says_plainly_that_nothing_is_related(assistant):
    a, _ = assistant
    assert search_text(a, 1, "zebra", "en") == (
        "🔎 Nothing related to 'zebra' was found in the earlier conversations: no message uses those words or "
        "means anything close."
    )
    assert "관련된 지난 대화를 찾지 못했어요" in search_text(a, 1, "zebra", "ko")
    assert "puppy" in search_text(a, 1, "leash", "en")


def test_the_cli_finds_nothing_for_a_zebra_with_the_real_model(data_dir):
    """The report of issue 31/32: ``python -m bot search --chat local zebra`` listed "echo: x" at 0.942."""
    transcript = Transcript(data_dir)
    said = ("x", "hello there", "what's the weather like", "my locker code is 4719", "I adopted a puppy named Bori",
            "test", "ok", "bye")  # fmt: skip
    for text in said:
        transcript.append("local", [msg("user", text), msg("assistant", f"echo: {text}")])
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DATA_DIR": str(data_dir), "RECALL_MEANING": "on"}

    def search(*words: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "bot", "search", "--chat", "local", *words],
                              capture_output=True, text=True, env=env, timeout=120, check=False)  # fmt: skip

    zebra = search("zebra")
    assert zebra.returncode == 0 and zebra.stdout == ""
    assert zebra.stderr.endswith("nothing related to 'zebra' in chat local: no message uses these words or means "
                                 "anything close\n")  # fmt: skip
    locker = search("locker", "code")
    rows = [json.loads(line) for line in locker.stdout.splitlines()]
    assert [r["content"] for r in rows] == ["my locker code is 4719", "echo: my locker code is 4719"], locker.stderr
    dog = [json.loads(line)["content"] for line in search("dog").stdout.splitlines()]  # a related word: puppy
    assert sorted(dog) == ["I adopted a puppy named Bori", "echo: I adopted a puppy named Bori"]


def test_a_question_finds_nothing_unless_a_turn_is_clearly_about_it_or_the_best_scores_high(
    transcript, data_dir, monkeypatch
):
    """The two halves of the floor (memory.recall.tuning): the related turns come back only if one of them
    is clearly about the question (by its words, or a close paraphrase), or the best of them scores
    FLOOR_SCORE; a faint closeness alone is not enough."""
    from memory.recall import tuning
    from memory.recall.tuning import confident, finds, is_related

    assert not finds(tuning.FLOOR_SCORE - 0.01, False) and finds(tuning.FLOOR_SCORE, False)
    assert finds(0.1, True)  # a turn clearly about it: whatever the score
    faint, clear = 0.2, 0.4  # similarities around a chat's mean: unrelated turns about 0
    assert not confident(0.0, 0.0, faint, False) and confident(0.0, 0.0, clear, False)
    assert confident(2.0, 0.2, 0.25, False)  # a fifth of the words and a fair closeness together
    assert is_related(1.0, 0.5, False) and not is_related(1.0, 0.4, False)  # half of the query's weight
    assert is_related(1.0, 0.2, True)  # every word of the query said in the chat: any of them counts
    assert is_related(5.0, 0.3, False)  # a rare word the chat said
    assert not is_related(0.0, 0.0, True)
    pals(transcript)
    leash = "Would she need a leash?"  # no word of it said: by its meaning only
    # the floor compares the best score shown; a guess's is shown with the disclosure prior and the cut of a short
    # message, which the floor leaves out (memory.recall.told.unprompted; tests/test_recall_guess.py), and with its
    # meaning weighed more (Weights.meaning_lived), which the floor does not see: off here, the scores are the same
    plain = Weights(disclose=0.0, brief=0.0, meaning_lived=0.0)
    with RecallIndex(data_dir, meaning=WordsEmbedder(), weights=plain) as index:
        index.sync("7")
        index.embed("7")
        best = index.search("7", leash, 8)[0]
        assert "puppy" in best.content
        monkeypatch.setattr(tuning, "FLOOR_SCORE", best.score + 0.01)  # the puppy scores below the floor now
        assert "puppy" in index.search("7", leash, 8)[0].content  # but is a clear paraphrase of the question
        monkeypatch.setattr(tuning, "CONFIDENT", 10.0)  # only faintly close now
        assert index.search("7", leash, 8) == []
        assert "puppy" in index.search("7", "puppy", 8)[0].content  # a word the chat said: found still
        monkeypatch.setattr(tuning, "FLOOR_SCORE", best.score - 0.01)  # the puppy scores above the floor
        assert "puppy" in index.search("7", leash, 8)[0].content


def test_a_nickname_alone_does_not_make_a_turn_about_the_question(transcript, data_dir):
    """A capitalised word that names nobody the chat knows ("Aud", written "aud" in the chat) still finds
    the turns calling someone so, but does not make them about what the question asks."""
    transcript.append("c", [msg("user", "hey aud, how was work today"), msg("assistant", "long, but fine")])
    transcript.append("c", [msg("user", f"what a day, chat number {i}") for i in range(30)])
    with RecallIndex(data_dir) as index:
        assert index.search("c", "What did Aud think of the election?", 5) == []
        assert "aud" in index.search("c", "How was work for Aud?", 5)[0].content


# -- a question asking for a fact ---------------------------------------------------------------------------


def test_which_questions_ask_for_a_fact():
    from memory.recall.query import asks_for_fact

    facts = ["Where did Deb see a zebra?", "What tattoo did Aud get?", "How much did Gi pay the plumber?",
             "which gym locker code?", "Who visited Nate from Chicago?",
             "지난주에 뭐 먹었어?", "회의실 예약 어디로 했어?", "택배 무게가 몇 kg였지?",
             "공부에 대해 뭐라고 했어?"]  # fmt: skip
    others = ["Would Deb enjoy a farmers market?", "What would Mel likely study?", "Is Mel a bookworm?",
              "Did I see a zebra on safari?", "What hobbies does Deb have?", "zebra",
              "무슨 책을 좋아할까?", "아마 언제 올 것 같아?", "그 사람 착해?", "취미들이 뭐야?", "얼룩말",
              "유리는 도시를 벗어나서 뭘 했어?", "주말에 뭐 해?", "쉬는 날엔 뭐하면서 놀아?"]  # fmt: skip
    assert [asks_for_fact(q) for q in facts] == [True] * len(facts)
    assert [asks_for_fact(q) for q in others] == [False] * len(others)


def concert(transcript: Transcript, chat: str = "c") -> None:
    """A concert and a car among 300 turns of chatter: "saw" is a rare word of the chat."""
    transcript.append(chat, [
        msg("user", "Last night I saw the Lumineers live, I screamed so much"), msg("assistant", "So jealous!"),
        msg("user", "I finally bought a car, a used Subaru"), msg("assistant", "Nice!"),
    ])  # fmt: skip
    transcript.append(chat, [msg("user", f"what a day, chat number {i}") for i in range(300)])


SAFARI = "Where did I see a zebra on safari?"  # one word of three said in the chat ("saw"), a rare one


def test_a_question_asking_for_a_fact_finds_nothing_unless_a_turn_says_enough_of_it(transcript, data_dir):
    """The concert holds a rare word of the question (its best score passes FLOOR_SCORE), but a third of it: a
    fact the chat would have said in the question's words is not there (memory.recall.tuning.states_fact)."""
    concert(transcript)
    with RecallIndex(data_dir) as index:
        index.sync("c")
        assert index.search("c", SAFARI, 5) == []
        assert index.related("c", SAFARI, 5) == []  # the automatic recall: nothing either
        assert "Lumineers" in index.search("c", "Which band did I see?", 5)[0].content
        assert "Lumineers" in index.related("c", "Which band did I see?", 5)[0].content
        assert "Subaru" in index.search("c", "What car did I buy?", 5)[0].content
        # a yes/no question is answered from what is related (an inference), not held to the fact's words
        assert "Lumineers" in index.search("c", "Did I see a zebra on safari?", 5)[0].content
    with RecallIndex(data_dir, weights=Weights(fact=0.0)) as unruled:  # what the rule left out
        assert "Lumineers" in unruled.search("c", SAFARI, 5)[0].content
        assert "Lumineers" in unruled.related("c", SAFARI, 5)[0].content


def test_a_korean_question_asking_for_a_fact_is_held_to_it_too(transcript, data_dir):
    """The same rule for a question in Korean (a question word anywhere in it); searched by words only, at
    FACT_KO_WORDS of it: its bigrams hold many terms no turn has (a politer ending), and the fact still comes."""
    transcript.append("k", [
        msg("user", "어젯밤에 루미니어스 공연 봤어, 소리 엄청 질렀어"), msg("assistant", "부럽다!"),
    ])  # fmt: skip
    transcript.append("k", [msg("user", f"오늘 하루 어땠어 {i}") for i in range(300)])
    zebra = "공연장 근처 동물원에서 얼룩말 인형 어디서 샀지?"  # "공연" is said, and rare: nothing else of it
    with RecallIndex(data_dir) as index:
        index.sync("k")
        assert index.search("k", zebra, 5) == []
        assert "루미니어스" in index.search("k", "루미니어스 공연 언제 보셨어요?", 5)[0].content
        assert "루미니어스" in index.search("k", "어젯밤에 무슨 공연 보셨다고 하셨죠?", 5)[0].content  # polite
    with RecallIndex(data_dir, weights=Weights(fact=0.0)) as unruled:
        assert "루미니어스" in unruled.search("k", zebra, 5)[0].content


def test_the_automatic_recall_keeps_its_own_floor_for_korean(data_dir):
    """In a conversation of bench.recall_korean the rule's share of the question's words cost the automatic
    recall this fact (and 2-4 of 84 in all, for 2-3 more silent off-topic questions)."""
    from bench.recall_korean import generate, write

    conv = generate(10)
    write(conv, data_dir)
    asked, _, line = next(q for q in conv.questions if q[0] == "팀 회식을 어디에서 하기로 했더라?")
    with RecallIndex(data_dir, sync_budget=None) as index:
        index.sync(conv.chat)
        assert line in [h.line for h in index.related(conv.chat, asked, 5)]


@pytest.fixture
def concert_assistant(transcript: Transcript, clock, data_dir):
    yield from recalling(transcript, clock, data_dir, concert, "2")


async def test_a_fact_never_said_reaches_no_front_end(concert_assistant):
    """/search, the search_memory tool and the automatic recall all say nothing for the safari question."""
    a, model = concert_assistant
    assert search_text(a, 2, SAFARI, "en").startswith("🔎 Nothing related to 'Where did I see a zebra on safari?'")
    assert "Lumineers" in search_text(a, 2, "Which band did I see?", "en")
    model.queue(tool_call("search_memory", {"query": SAFARI}), "Never mentioned.")
    await a.ask(2, SAFARI)
    assert recalled(model.calls[0]) == ""  # the automatic recall added nothing to the request
    result = model.calls[1].messages[-1]["content"][0]
    assert result["content"].startswith("nothing found: no earlier message of this chat is related to")
    model.queue("The Lumineers.")
    await a.ask(2, "Which band did I see live?")
    assert "Lumineers" in recalled(model.calls[-1])


def test_the_cli_finds_nothing_for_a_fact_never_said(data_dir):
    concert(Transcript(data_dir), "local")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DATA_DIR": str(data_dir), "RECALL_MEANING": "off"}

    def search(query: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "bot", "search", "--chat", "local", query],
                              capture_output=True, text=True, env=env, timeout=120, check=False)  # fmt: skip

    safari = search(SAFARI)
    assert safari.returncode == 0 and safari.stdout == "" and "nothing related to" in safari.stderr
    band = [json.loads(line)["content"] for line in search("Which band did I see?").stdout.splitlines()]
    assert band[:1] == ["Last night I saw the Lumineers live, I screamed so much"]
