"""A question asking for a guess about someone (issue 32, item 2: "Would Deb enjoy a cabin weekend?", "Does Mia
have a garden?") or for a list (item 1: "Which gardens has Mia been to?") rests on what they told of themselves:
the turns saying "I", "my", "we" come first (memory.recall.rank, ``Weights.disclose``), a message of a few words
keeps only a share of its score (``Weights.brief``), the turns of others than the person it names too
(``Weights.others``), and the relevance floor counts these (``Weights.disclose_floor``); a guess about someone
named returns its related turns without a sure one (``Weights.guess_related``)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, cast

import pytest

from bot.cli import search as search_cli
from memory.recall import RecallIndex, told
from memory.recall.dates import asks_when, plain_when
from memory.recall.meaning import Dense
from memory.recall.query import Query, asks_for_guess
from memory.recall.rank import Turn, _states_fact
from memory.recall.store import ChatRow
from memory.recall.tuning import THOROUGH, Weights
from memory.transcript import Transcript
from tests.test_recall_spread import CHAT, line, sessions

TOLD = "Mia: I spend every evening in the garden now, the tomatoes are ripe."  # what Mia told of herself
SAID = "Mia: The garden show is on the radio tonight."  # the question's word, nothing of her life


def garden_chat(transcript: Transcript) -> None:
    sessions(
        transcript,
        [
            [("Mia", TOLD.removeprefix("Mia: ")), ("Leo", "Lovely.")],
            [("Leo", "Work was long."), ("Mia", "Same here.")],
            [("Mia", SAID.removeprefix("Mia: ")), ("Leo", "Nice.")],
        ],
    )


PLAIN = {"disclose": 0.0, "brief": 0.0}  # the ranking without what a guess or a list rests on


def found(data_dir: Path, question: str, **weights: Any) -> list[str]:
    with RecallIndex(data_dir, weights=Weights(**weights)) as index:
        return [h.content for h in index.search(CHAT, question, 5)]


def test_a_guess_about_someone_puts_what_they_told_of_themselves_first(transcript, data_dir):
    garden_chat(transcript)
    question = "Does Mia have a garden?"
    assert found(data_dir, question, **PLAIN) == [SAID, TOLD]  # the shorter, newer turn, by its words
    assert found(data_dir, question) == [TOLD, SAID]


def test_a_question_asking_for_a_list_puts_them_first_too(transcript, data_dir):
    garden_chat(transcript)
    question = "Which gardens has Mia been to?"
    assert found(data_dir, question, **PLAIN) == [SAID, TOLD]
    assert found(data_dir, question) == [TOLD, SAID]


def test_a_question_not_asking_for_a_guess_is_left_as_it_was(transcript, data_dir):
    garden_chat(transcript)
    question = "Tell me about the garden"  # naming nobody
    assert found(data_dir, question) == found(data_dir, question, **PLAIN) == [SAID, TOLD]


def test_a_question_naming_someone_weighs_how_much_a_message_tells_and_nothing_more(transcript, data_dir):
    """``Weights.brief_named``: any other question naming someone cuts a message of a few words ("The garden show is
    on the radio tonight": four terms of eight), but does not put what she told of herself first (``disclose``)."""
    garden_chat(transcript)
    question = "Tell me about Mia's garden"
    assert found(data_dir, question, brief_named=0.0) == [SAID, TOLD]
    assert found(data_dir, question) == [TOLD, SAID]


def test_a_question_naming_someone_does_not_put_what_they_told_first(transcript, data_dir):
    """Two messages long enough not to be cut: "I", "my" weigh nothing for a question naming her, as they do for a
    guess about her."""
    told = "Mia: I spent the whole evening in the garden again, picking tomatoes and pulling weeds for hours."
    said = "Mia: The garden show on the radio tonight has a long segment about tomatoes and weeds."
    sessions(transcript, [[("Mia", told.removeprefix("Mia: ")), ("Leo", "Lovely.")], [("Leo", "Work was long.")],
                          [("Mia", said.removeprefix("Mia: ")), ("Leo", "Nice.")]])  # fmt: skip
    assert found(data_dir, "Tell me about Mia's garden")[:2] == [said, told]
    assert found(data_dir, "Does Mia have a garden?")[:2] == [told, said]


def test_a_korean_question_naming_someone_keeps_a_short_message_whole(transcript, data_dir):
    """The cut counts index terms, and Hangul is indexed by its two-letter pieces (memory.recall.text): a Korean
    question is left as it was (bench.recall_korean keeps its figures)."""
    told = "요즘 매일 저녁마다 정원에서 시간을 보내고 있어, 토마토도 다 익었고 상추도 잘 자라고 있어"
    sessions(transcript, [[("민수", told), ("지은", "좋네.")], [("민수", "정원 얘기"), ("지은", "그래.")]])
    assert found(data_dir, "민수의 정원")[:2] == ["민수: 정원 얘기", f"민수: {told}"]


def test_a_question_naming_two_people_puts_what_they_told_first_too(transcript, data_dir):
    """``Weights.pair``: what two people do ("How do Deb and Andy help other people?") is what they told of
    themselves, though the question asks for no guess and no list in its words."""
    garden_chat(transcript)
    question = "Tell me about Mia and Leo's garden"
    uncut = {"brief": 0.0, "brief_named": 0.0}  # no message's cut: what they told of themselves alone
    assert found(data_dir, question) == [TOLD, SAID]
    assert found(data_dir, question, pair=False, **uncut) == [SAID, TOLD]
    assert found(data_dir, question, **uncut) == [TOLD, SAID]
    one = "Tell me about Mia's garden"  # one person: not what she told of herself (only the cut, see above)
    assert found(data_dir, one, **uncut) == found(data_dir, one, pair=False, **uncut) == [SAID, TOLD]


def test_a_fact_asked_of_two_people_is_still_held_to_the_relevance_floor(transcript, data_dir):
    """``Weights.pair`` weighs what they told of themselves, nothing more: "Where did Mia and Leo see a zebra on
    safari?" asks for a fact the chat would have said (memory.recall.query.asks_for_fact), and one rare word of it
    ("saw") is not enough."""
    chatter = [
        line(who, f"{text} {i}", 1 + i // 3, 2 * (i % 3) + k)
        for i in range(150)
        for k, (who, text) in enumerate([("Leo", "what a day, chat number"), ("Mia", "same here, day")])
    ]
    transcript.append(CHAT, [line("Mia", "Last night I saw the Lumineers live, I screamed so much", 0, 0), *chatter])
    assert found(data_dir, "Where did Mia and Leo see a zebra on safari?") == []
    assert "Lumineers" in found(data_dir, "Which band did Mia and Leo see?")[0]


def test_bot_search_answers_a_guess_the_same_way(transcript, data_dir, capsys):
    garden_chat(transcript)
    assert search_cli.main(["--chat", CHAT, "--data-dir", str(data_dir), "Does Mia have a garden?"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["content"] for r in rows] == [TOLD, SAID]


HIKE = "Mia: I spent the whole long weekend hiking up in the green hills with three old friends."


def close_by_meaning(monkeypatch: pytest.MonkeyPatch, text: str, similarity: float) -> None:
    """Recall by meaning finds ``text`` alone, at ``similarity`` around the chat's mean (no word of the query)."""

    def by_meaning(self: RecallIndex, conn: sqlite3.Connection, row: ChatRow, *_: object) -> object:
        ids = [i for i, said in conn.execute("SELECT id, content FROM turns WHERE id BETWEEN ? AND ?", (row.lo, row.hi))
               if said == text]  # fmt: skip
        dense = Dense(top=ids, floor=0.0, centred=True, crowded=False, _rows={ids[0]: 0}, _sims=[similarity])
        return lambda _text: lambda: dense

    monkeypatch.setattr(RecallIndex, "_by_meaning", by_meaning)


def test_the_relevance_floor_counts_what_a_guess_rests_on(transcript, data_dir, monkeypatch):
    """A guess in no word of the chat ("zebra safari"), its closest turn related by meaning only, below the floor's
    score as it is and above it when multiplied: it finds what she told of herself (``Weights.disclose_floor``)."""
    sessions(transcript, [[("Mia", HIKE.removeprefix("Mia: ")), ("Leo", "Sounds tiring.")], [("Leo", "Work.")]])
    close_by_meaning(monkeypatch, HIKE, 0.3)  # related, not a paraphrase
    question = "Would Mia enjoy a zebra safari?"
    held = {"guess_related": False}  # the floor's own measure, for a guess too (see the next test)
    assert found(data_dir, question, **held) == [HIKE]  # the multiplied score passes the floor
    assert found(data_dir, question, disclose_floor=False, **held) == []
    assert found(data_dir, question, **PLAIN, **held) == []


@pytest.mark.parametrize(
    ("question", "similarity", "expected"),
    [
        ("Would Mia enjoy a zebra safari?", 0.3, [HIKE]),  # a guess about Mia: her related turn, though not sure
        ("Would Mia enjoy a zebra safari?", 0.05, []),  # ... and only a related one (FLOOR_CLOSE)
        ("Would I enjoy a zebra safari?", 0.3, []),  # a guess naming nobody: held to the floor
        ("Which zebra safaris has Mia been on?", 0.3, []),  # a list: held to the floor
    ],
)
def test_a_guess_about_someone_named_returns_their_related_turns(
    transcript, data_dir, monkeypatch, question, similarity, expected
):
    """``Weights.guess_related``: a guess about someone the question names is never said outright; the turns
    related to it by their meaning come back though none is clearly about it nor scores the floor's score."""
    sessions(transcript, [[("Mia", HIKE.removeprefix("Mia: ")), ("Leo", "Sounds tiring.")], [("Leo", "Work.")]])
    close_by_meaning(monkeypatch, HIKE, similarity)
    assert found(data_dir, question, **PLAIN) == expected
    assert found(data_dir, question, **PLAIN, guess_related=False) == []


HERS = "Ava: I started painting again, a field of sunflowers."
HIS = "Leo: My favourite hobby is painting, my hobby since school."  # the friend's own, in the question's words


def test_a_list_about_someone_puts_their_turns_before_the_friend_s(transcript, data_dir):
    """``Weights.others``: the friend telling of his own hobby in the question's words came first; the question
    asks about Ava. A question naming both keeps his turn as it is."""
    sessions(transcript, [[("Ava", HERS.removeprefix("Ava: ")), ("Leo", HIS.removeprefix("Leo: "))],
                          [("Leo", "Work was long."), ("Ava", "Same here.")]])  # fmt: skip
    question = "What hobbies does Ava have?"
    assert found(data_dir, question, others=1.0) == [HIS, HERS]
    assert found(data_dir, question) == [HERS, HIS]
    assert found(data_dir, "Would Ava like a hobby?") == [HERS, HIS]  # a guess too
    assert found(data_dir, "What hobbies do Ava and Leo have?") == found(
        data_dir, "What hobbies do Ava and Leo have?", others=1.0
    ) == [HIS, HERS]  # fmt: skip


SHORT = "Mia: my pottery class!"  # the question's words, and nothing more
LONG = "Mia: I finished my first bowl at the pottery class today, glazed it blue and fired it in the kiln."


def test_a_short_message_tells_less_than_a_long_one(transcript, data_dir):
    """Both hold the question's words and say "my"; by its words alone the short one comes first (BM25 prefers
    a short turn); for a list or a guess, the long one, which tells what she did."""
    sessions(transcript, [[("Mia", SHORT.removeprefix("Mia: ")), ("Leo", "Nice.")],
                          [("Mia", LONG.removeprefix("Mia: ")), ("Leo", "Wow.")]])  # fmt: skip
    question = "Which pottery classes has Mia taken?"
    assert found(data_dir, question, brief=0.0) == [SHORT, LONG]
    assert found(data_dir, question) == [LONG, SHORT]
    assert found(data_dir, "Tell me about the pottery class") == [SHORT, LONG]  # naming nobody: as it was
    named = "Tell me about Mia's pottery class"  # naming her: the cut alone (``Weights.brief_named``)
    assert found(data_dir, named, brief_named=0.0) == [SHORT, LONG]
    assert found(data_dir, named) == [LONG, SHORT]


MUDDY = "Mia: My hands are muddy again from the studio."


def test_the_floor_sees_a_short_message_s_score_before_the_cut():
    """Without ``Weights.disclose_floor`` the relevance floor reads the best score as it was before a guess's or a
    list's priors (memory.recall.told ``unprompted``): a turn saying "my" (x 1.6) of four terms (x 4/8) that scored
    1.0 counts as 1.0; with it, as shown."""
    turn = Turn(id=1, file=0, line=1, offset=0, ts=None, day=None, at=None, role="user", name="Mia", speaker="mia",
                session=1, dead=0, terms="hand muddy again studio", content=MUDDY)  # fmt: skip
    weights = Weights(disclose_floor=False)
    turn.score = 1.0 * (1 + weights.disclose) * 4 / weights.brief
    assert told.unprompted([turn], True, weights) == pytest.approx(1.0)
    assert told.unprompted([turn], False, weights) == turn.score  # any other question: the score as it is
    assert told.unprompted([turn], True, Weights()) == turn.score
    turn.score = 1.0 * 4 / weights.brief_named  # any other question naming someone: the cut alone
    assert told.unprompted([turn], False, weights, short=True) == pytest.approx(1.0)
    assert told.unprompted([turn], False, Weights(), short=True) == turn.score


@pytest.mark.parametrize(
    ("question", "guess"),
    [
        ("What would Deb likely study?", True),
        ("Would Mel enjoy a cabin weekend?", True),
        ("Is Mel a bookworm?", True),
        ("Could Cal strum along at a bonfire?", True),
        ("Which job might Gi take?", True),
        ("What could Deb see from the top of the trail?", False),
        ("What hobbies does Deb have?", False),
        ("When did Deb move?", False),
        ("Tell me about Mia's garden", False),
        ("무슨 책을 좋아할까?", True),  # -까: a guess in Korean too
        ("지호는 아마 운동을 좋아하겠지?", True),
        ("민수는 무슨 책을 읽었어?", False),
        ("무슨 책 좋아해?", False),
    ],
)
def test_which_questions_ask_for_a_guess(question, guess):
    assert asks_for_guess(question) is guess


GARDEN = "Mia: I spend every evening in the garden now, the tomatoes are ripe and the basil too."
MARKET = "Mia: The farmers market downtown opens again on Saturday morning, the radio said."


def market_chat(transcript: Transcript) -> None:
    sessions(transcript, [[("Mia", GARDEN.removeprefix("Mia: ")), ("Leo", "Lovely.")], [("Leo", "Work was long.")],
                          [("Mia", MARKET.removeprefix("Mia: ")), ("Leo", "Nice.")]])  # fmt: skip


@pytest.mark.parametrize(
    "question",
    [
        "Would Mia enjoy a farmers market?",
        "Which farmers markets has Mia been to?",
        "Would Mia and Leo enjoy a farmers market?",
    ],
)
def test_a_guess_or_a_list_weighs_the_meaning_more(transcript, data_dir, monkeypatch, question):
    """``Weights.meaning_lived``: a guess about her, a list of what she did, or what two people did rests on what
    she told in other words than the question's (her garden, close in meaning only), more than on a turn holding
    the question's words and nothing of her life."""
    market_chat(transcript)
    close_by_meaning(monkeypatch, GARDEN, 0.3)
    assert found(data_dir, question, meaning_lived=0.0) == [MARKET, GARDEN]
    assert found(data_dir, question) == [GARDEN, MARKET]


def test_any_other_question_weighs_the_meaning_as_before(transcript, data_dir, monkeypatch):
    market_chat(transcript)
    close_by_meaning(monkeypatch, GARDEN, 0.45)
    question = "What did Mia say about the farmers market?"
    assert found(data_dir, question) == [MARKET, GARDEN]
    assert found(data_dir, question, meaning=Weights().meaning_lived) == [GARDEN, MARKET]  # as much: the garden first


@pytest.mark.parametrize(
    "question",
    [
        "When did Mia go camping?",
        "when was mia in the garden",
        "  When?",
        "How long ago did Mia go camping?",
        "how many years ago did Mia move?",
        "In which month did Mia adopt a puppy?",
        "What year did Mia start painting?",
        "on what day was mia at the market",
        "How long has Mia been gardening?",  # since when (twenty-first round)
        "For how long have Mia and Leo been friends?",
        "Since when does Mia garden?",
    ],
)
def test_questions_asking_when(question: str) -> None:
    assert asks_when(question)


@pytest.mark.parametrize(
    "question",
    [
        "Whenever Mia gardens, what does she grow?",
        "What did Mia do last year?",
        "How long did the hike take Mia?",  # how long it lasted
        "How long was Mia's trip?",
        "What yearly trip does Mia take?",
        "Which days does Mia spend in the garden?",
        "What day trips did Mia take?",
        "What weekend plans does Mia have?",
    ],
)
def test_questions_not_asking_when(question: str) -> None:
    assert not asks_when(question)


@pytest.mark.parametrize(
    ("question", "searched"),
    [
        ("What year did Mia start painting?", "when did Mia start painting?"),
        ("How long ago did Mia move?", "when did Mia move?"),
        ("When did Mia move?", "when did Mia move?"),
        ("How long has Mia been gardening?", "when has Mia been gardening?"),
        ("Since when has Mia lived in Denver?", "when has Mia lived in Denver?"),
        ("민지는 몇 월에 캠핑 갔어?", "민지는 몇 월에 캠핑 갔어?"),  # Korean: as it is (twenty-first round)
        ("What did Mia paint last year?", "What did Mia paint last year?"),
        ("What day trips did Mia take?", "What day trips did Mia take?"),
    ],
)
def test_the_words_asking_for_a_time_are_not_searched_for(question: str, searched: str) -> None:
    assert plain_when(question) == searched


@pytest.mark.parametrize(
    ("question", "nobody"),
    [
        ("When was Mia in the garden?", "When was the garden full of weeds?"),
        ("How long ago was Mia in the garden?", "How long ago was the garden full of weeds?"),
        ("How long has Mia been in the garden?", "How long has the garden been full of weeds?"),
    ],
)
def test_a_question_asking_when_someone_did_something_puts_what_they_told_first(
    transcript, data_dir, question: str, nobody: str
):
    """``Weights.when_lived`` (nineteenth round): "When was Mia in the garden?" asks about something she did, which
    she told of herself; so do "How long ago was she...?" (twentieth) and "How long has she been...?" (twenty-first);
    one naming nobody is left as it was."""
    told = "Mia: I spent the whole evening in the garden again, picking tomatoes and pulling weeds for hours."
    said = "Mia: The garden show on the radio tonight has a long segment about tomatoes and weeds."
    sessions(transcript, [[("Mia", told.removeprefix("Mia: ")), ("Leo", "Lovely.")], [("Leo", "Work was long.")],
                          [("Mia", said.removeprefix("Mia: ")), ("Leo", "Nice.")]])  # fmt: skip
    assert found(data_dir, question)[:2] == [told, said]
    assert found(data_dir, question, when_lived=False)[:2] == [said, told]
    assert found(data_dir, nobody) == found(data_dir, nobody, when_lived=False, unsaid_lived=False)


def test_a_question_is_in_other_words_when_it_asks_for_a_fact_in_english_with_a_word_the_chat_never_said():
    def query(**kw: Any) -> Query:
        return Query.make({}, {}, [], frozenset(), 0, **kw)

    assert query(fact=True, unknown=6.0).unsaid
    assert not query(fact=True, unknown=0.0).unsaid  # every word said
    assert not query(fact=False, unknown=6.0).unsaid  # a guess, a list, a yes/no question: their own rules
    assert not query(fact=True, unknown=6.0, hangul=True).unsaid  # Korean bigrams: many are never said


def test_a_korean_question_for_a_fact_is_held_to_less_of_its_words():
    """``Weights.fact_ko`` (twentieth round): a Korean question's bigrams hold terms the chat never said (a particle,
    an ending), so with meaning its best turn needs 0.8 of ``Weights.fact``'s share of it; an English one all of it."""
    turn = Turn(id=1, file=0, line=1, offset=0, ts=None, day=None, at=None, role="user", name="Mia", speaker="mia",
                session=1, dead=0, terms="hand muddy again studio", content=MUDDY)  # fmt: skip
    turn.own = 1.0  # a quarter of the question below
    searched = cast(Dense, object())  # with meaning (only whether there is one is read here)

    def states(hangul: bool, dense: Dense | None = searched, **weights: Any) -> bool:
        question = Query.make({}, {}, [], frozenset(), 0, unknown=4.0, fact=True, hangul=hangul)
        return _states_fact([turn], question, Weights(**weights), THOROUGH, lambda t: True, dense)

    assert states(True)  # 0.25 of it >= 0.8 * 0.3
    assert not states(True, fact_ko=1.0)
    assert not states(False)  # English: 0.25 < 0.3
    assert states(True, dense=None, fact_ko=1.0)  # by words only: FACT_KO_WORDS


def test_a_question_for_a_fact_in_other_words_puts_what_they_told_first(transcript, data_dir):
    """``Weights.unsaid_lived`` (twentieth round): "What did Mia learn about tomatoes in the garden?" holds a word the
    chat never said ("learn"): the fact was told in other words, by her; a question in the chat's words, or naming
    nobody, is left as it was."""
    told = "Mia: I spent the whole evening in the garden again, picking tomatoes and pulling weeds for hours."
    said = "Mia: The garden show on the radio tonight has a long segment about tomatoes and weeds."
    sessions(transcript, [[("Mia", told.removeprefix("Mia: ")), ("Leo", "Lovely.")], [("Leo", "Work was long.")],
                          [("Mia", said.removeprefix("Mia: ")), ("Leo", "Nice.")]])  # fmt: skip
    question = "What did Mia learn about tomatoes in the garden?"
    assert found(data_dir, question)[:2] == [told, said]
    assert found(data_dir, question, unsaid_lived=False)[:2] == [said, told]
    for plain in ("What did Mia say about the garden?", "What is the garden harvest like?"):  # every word said; nobody
        assert found(data_dir, plain) == found(data_dir, plain, unsaid_lived=False)


def test_a_question_asking_when_of_the_wrong_person_still_finds_the_other_ones_telling(transcript, data_dir):
    """The other person's turns are not cut for a question asking when (``Weights.others``, as for a guess): "When
    was Mia in the garden?" may be asked of Mia when it was Leo who told of his evening in the garden."""
    told = "Leo: I spent the whole evening in the garden again, picking tomatoes and pulling weeds for hours."
    said = "Mia: The garden show on the radio tonight has a long segment about tomatoes and weeds."
    sessions(transcript, [[("Leo", told.removeprefix("Leo: ")), ("Mia", "Lovely.")], [("Leo", "Work was long.")],
                          [("Mia", said.removeprefix("Mia: ")), ("Leo", "Nice.")]])  # fmt: skip

    def scores(question: str, **weights: Any) -> dict[str, float]:
        with RecallIndex(data_dir, weights=Weights(**weights)) as index:
            return {h.content: h.score for h in index.search(CHAT, question, 5)}

    question = "When was Mia in the garden?"
    read, plain = scores(question), scores(question, when_lived=False)
    assert read[told] / read[said] > plain[told] / plain[said]  # Leo told of himself: his turn counts more, not less
    guess, plain = scores("Does Mia have a garden?"), scores("Does Mia have a garden?", others=1.0)
    assert guess[told] / guess[said] < plain[told] / plain[said]  # a guess about Mia: Leo's turns are cut
