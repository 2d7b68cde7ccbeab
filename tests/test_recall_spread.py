"""Questions whose answer is spread over many days (memory.recall.spread, issue 32): the turns of other
sessions that echo the best ones, for a question asking for a list, after the best places."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory.recall import RecallIndex
from memory.recall.spread import asks_for_many, plain_list
from memory.recall.text import plain_terms
from memory.recall.tuning import Weights
from memory.transcript import Transcript

CHAT = "7"
DISTRACTIONS = [  # the question's word, said by the friend: each outranks a turn without it
    "A hobby would be nice, honestly.",
    "My brother has a hobby for every season.",
    "I read that a hobby lowers stress.",
    "Is a hobby worth the money though?",
]


def at(day: int, minute: int = 0) -> str:
    return f"2026-0{3 + day // 28}-{1 + day % 28:02d}T10:{minute:02d}:00+09:00"


def line(who: str, text: str, day: int, minute: int) -> dict[str, str]:
    return {"role": "user" if who == "Mia" else "assistant", "name": who, "content": f"{who}: {text}",
            "at": at(day, minute)}  # fmt: skip


def sessions(transcript: Transcript, days: list[list[tuple[str, str]]]) -> None:
    """One session a week (days apart: each its own session), the turns of each a minute apart."""
    transcript.append(
        CHAT, [line(who, text, 7 * d, m) for d, turns in enumerate(days) for m, (who, text) in enumerate(turns)]
    )


def pottery_chat(transcript: Transcript) -> None:
    """Mia's pottery, told once with the question's word and mentioned in two later sessions by the studio's
    name only; the friend's chatter with the question's word in between."""
    sessions(
        transcript,
        [
            [("Mia", "My new hobby is pottery at the Clayhouse studio!"), ("Leo", "Fun, send pictures.")],
            [("Leo", DISTRACTIONS[0]), ("Mia", "Picked up my glazed bowl at Clayhouse today.")],
            [("Leo", DISTRACTIONS[1]), ("Mia", "Long day."), ("Leo", DISTRACTIONS[2])],
            [("Mia", "Spent Sunday at Clayhouse again, muddy hands."), ("Leo", DISTRACTIONS[3])],
        ],
    )


def found(data_dir: Path, question: str, limit: int = 10, **weights: Any) -> list[str]:
    with RecallIndex(data_dir, weights=Weights(**weights)) as index:
        return [h.content for h in index.search(CHAT, question, limit)]


MENTIONS = ["Mia: Picked up my glazed bowl at Clayhouse today.", "Mia: Spent Sunday at Clayhouse again, muddy hands."]


def test_a_hobby_told_once_and_mentioned_in_two_later_sessions_comes_back_from_all_three(transcript, data_dir):
    pottery_chat(transcript)
    question = "What hobbies does Mia have?"
    without = found(data_dir, question, echo=0.0)
    assert without[0] == "Mia: My new hobby is pottery at the Clayhouse studio!"
    assert not set(MENTIONS) & set(without)  # no word of the question: never found
    hits = found(data_dir, question)
    assert hits[0] == without[0] and set(MENTIONS) <= set(hits)  # by the studio's name, a rare term of the best turn
    assert hits[:5] == without[:5]  # the best places stay (Weights.keep)
    assert hits.index(MENTIONS[0]) >= 5 and hits.index(MENTIONS[1]) >= 5


def test_the_best_places_stay_as_the_ranking_put_them(transcript, data_dir):
    pottery_chat(transcript)
    question = "What hobbies does Mia have?"
    before = found(data_dir, question, echo=0.0)
    loud = found(data_dir, question, echo=3.0)  # echoes that outscore the friend's chatter
    assert loud[:5] == before[:5] and set(MENTIONS) <= set(loud[5:])
    assert found(data_dir, question, echo=3.0, keep=0)[:5] != before[:5]  # what Weights.keep holds


@pytest.mark.parametrize("question", ["What kinds of hobbies does Mia have?", "Name the hobbies Mia has."])
def test_a_list_asked_in_other_forms_brings_the_echoes_too(transcript, data_dir, question):
    """A list asked for by "What kinds of ..." or "Name the ..." is read as one (``asks_for_many``): the later mentions
    come back as for "What hobbies does Mia have?", not held back by the gate as for a question for one thing."""
    pottery_chat(transcript)
    hits = found(data_dir, question)
    assert hits[0] == "Mia: My new hobby is pottery at the Clayhouse studio!"
    assert set(MENTIONS) <= set(hits)
    assert not set(MENTIONS) & set(found(data_dir, question, echo=0.0))


@pytest.mark.parametrize(
    "question", ["What does Mia enjoy doing?", "What does Mia like to do in her free time?", "What does Mia love?"]
)
def test_what_someone_likes_doing_is_asked_as_a_list_of_their_hobbies(transcript, data_dir, question):
    """A question for what Mia likes doing names no thing: it is read as a list (``asks_for_many``) of her hobbies
    (``plain_list``: "enjoy", a word the chat never said, is not searched), so her pottery comes first and its later
    mentions come back, as for "What hobbies does Mia have?"."""
    pottery_chat(transcript)
    hits = found(data_dir, question)
    assert hits == found(data_dir, "What hobbies does Mia have?")
    assert hits[0] == "Mia: My new hobby is pottery at the Clayhouse studio!" and set(MENTIONS) <= set(hits)
    assert not set(MENTIONS) & set(found(data_dir, question, echo=0.0))


def test_an_echo_holding_no_word_of_the_question_comes_back_by_its_echo_alone(transcript, data_dir):
    """The later mentions of the pottery share no word with the question and nothing next to them does: they score
    nothing of their own, and come back by what they echo of the best turn (its studio's name)."""
    sessions(
        transcript,
        [
            [("Mia", "My new hobby is pottery at the Clayhouse studio!")],
            [("Mia", MENTIONS[0].removeprefix("Mia: ")), ("Leo", "Nice colour.")],
            [("Leo", "Long week?"), ("Mia", MENTIONS[1].removeprefix("Mia: "))],
        ],
    )
    hits = found(data_dir, "What hobbies does Mia have?")
    assert hits[0] == "Mia: My new hobby is pottery at the Clayhouse studio!" and set(MENTIONS) <= set(hits)


def test_only_the_same_persons_turns_of_other_sessions_echo(transcript, data_dir):
    sessions(
        transcript,
        [
            [("Mia", "My new hobby is pottery at the Clayhouse studio!"), ("Mia", "Clayhouse opens at nine.")],
            [("Leo", DISTRACTIONS[0]), ("Leo", "I walked past Clayhouse today.")],
            [("Leo", DISTRACTIONS[1]), ("Mia", "Back at Clayhouse, muddy hands again.")],
            [("Leo", DISTRACTIONS[2]), ("Leo", DISTRACTIONS[3])],
        ],
    )
    hits = found(data_dir, "What hobbies does Mia have?")
    assert "Mia: Back at Clayhouse, muddy hands again." in hits
    assert "Leo: I walked past Clayhouse today." not in hits  # the friend's turn: not Mia's pottery
    assert "Mia: Clayhouse opens at nine." not in hits  # the same session: the neighbours' business, not an echo


def test_a_question_asking_for_one_thing_is_left_as_it_was(transcript, data_dir):
    pottery_chat(transcript)
    question = "What is Mia's hobby?"
    assert not asks_for_many(question)
    assert found(data_dir, question) == found(data_dir, question, echo=0.0)
    assert found(data_dir, question, gate=False) != found(data_dir, question)  # the gate is what holds it


def test_a_guess_about_someone_named_brings_the_echoes_too(transcript, data_dir):
    """``Weights.echo_guess``: "Would Mia like a new hobby?" rests on her pottery, told once with the question's
    word and mentioned later by the studio's name only; a guess naming nobody is left as it was."""
    pottery_chat(transcript)
    question = "Would Mia like a new hobby?"
    assert not set(MENTIONS) & set(found(data_dir, question, echo_guess=False))
    assert set(MENTIONS) <= set(found(data_dir, question))
    assert found(data_dir, "Would I like a new hobby?") == found(data_dir, "Would I like a new hobby?", echo=0.0)


def test_a_name_the_best_turn_capitalises_links_its_days_more_than_a_plain_word(transcript, data_dir):
    """``Weights.echo_plain``: of two later mentions, each holding one rare term of the best turn, the one naming
    the studio ("Clayhouse") echoes it more than the one holding a word it writes in lower case ("kiln"), though
    that one is more recent; with plain words in full, recency puts the kiln first."""
    sessions(
        transcript,
        [
            [("Mia", "My new hobby is pottery at the Clayhouse studio, they fire everything in a kiln!")],
            [("Leo", DISTRACTIONS[0]), ("Mia", "Back at Clayhouse tonight.")],
            [("Leo", DISTRACTIONS[1]), ("Mia", "The kiln cracked two of my mugs.")],
            [("Leo", DISTRACTIONS[2]), ("Leo", DISTRACTIONS[3])],
        ],
    )
    named, plain = "Mia: Back at Clayhouse tonight.", "Mia: The kiln cracked two of my mugs."

    def scores(**weights: Any) -> dict[str, float]:
        with RecallIndex(data_dir, weights=Weights(**weights)) as index:
            return {h.content: h.score for h in index.search(CHAT, "What hobbies does Mia have?", 10)}

    now = scores()
    assert now[named] > now[plain] > 0
    both = scores(echo_plain=1.0)
    assert both[plain] > both[named]


def test_the_words_a_turn_writes_only_in_lower_case() -> None:
    assert plain_terms("Luna stole my sock at Cedar Ridge, I laughed") == {
        "steal",
        "sock",
        "laugh",
    }  # index terms: "stole" is "steal"
    assert plain_terms("luna did it again. Luna!") == set()  # capitalised once: a name
    assert plain_terms("민수랑 clay 2024") == {"clai"}  # "clay" as indexed; no case in Hangul nor digits: not plain


@pytest.mark.parametrize(
    ("question", "many"),
    [
        ("What hobbies does Deb have?", True),
        ("Which places have Mel and Caro been to?", True),
        ("How many times did Jon go camping?", True),
        ("What has Andrew painted?", True),
        ("What are Caroline's hobbies?", True),
        ("Where has Melanie camped?", True),
        ("What do Gina and Calvin both enjoy?", True),
        ("What does Andrew do to stay fit?", True),
        ("What do Deb and Cal do for fun?", True),
        ("What does Mel do in her free time?", True),
        ("What animals live with Gi?", True),  # a plural noun and a verb of its own
        ("Which songs make her cry?", True),
        ("What kind of pets does John have?", True),  # a kind of thing, then a plural noun
        ("What types of desserts has Maria baked?", True),
        ("What kinds of art does Mel make?", True),  # kinds of anything
        ("What LGBTQ+ events has Caroline attended?", True),  # a word in capitals, a sign
        ("What musical artists/bands has Melanie seen?", True),
        ("Which US states has Tim visited?", True),
        ("Name the cities Evan has been to.", True),
        ("List all the pets Andy adopted.", True),
        ("List Deb's hobbies.", True),
        ("What does Deb enjoy doing?", True),  # what someone likes, no thing named
        ("What do Melanie's kids like?", True),
        ("What does Nate like to do in his free time?", True),
        ("What does Gi love doing?", True),
        ("What did Deb enjoy about the trip?", False),  # one time
        ("What kind of music does Deb like?", False),  # one kind
        ("What does Deb prefer, tea or coffee?", False),  # one of two
        ("Name of Deb's dog?", False),
        ("What kind of yoga does Deb practise?", False),  # one kind
        ("What kind of car did Deb buy?", False),
        ("Name one thing Deb made.", False),
        ("What helps her sleep?", False),  # a verb and its object
        ("What makes her happy?", False),
        ("민수가 배운 취미들은 뭐야?", True),
        ("민수는 지금까지 뭘 그렸어?", True),  # what he has painted (Korean marks no plural)
        ("민수가 흙으로 만든 건 뭐뭐 있어?", True),
        ("민수는 캠핑을 몇 번 갔어?", True),
        ("민수는 쉬는 날에 주로 뭐 해?", True),
        ("민수는 어제 뭘 그렸어?", False),
        ("What is Deb's job?", False),
        ("Would Andreas enjoy a pottery exhibition?", False),
        ("When did Caroline go to the support group?", False),
        ("Does Jess like the sea?", False),
        ("What helps Deb calm her mind?", False),
        ("What does Cal do every morning?", False),
        ("What does Gina do when volunteering?", False),
        ("What did Deb do to celebrate?", False),
        ("민수 직업이 뭐야?", False),
    ],
)
def test_which_questions_ask_for_a_list(question, many):
    assert asks_for_many(question) is many


@pytest.mark.parametrize(
    ("question", "searched"),
    [
        ("What does Deb enjoy doing?", "What does Deb hobbies?"),  # what she likes doing: her hobbies
        ("What does Cal like to do in his free time?", "What does Cal hobbies?"),
        ("What do Mel's kids love?", "What do Mel's kids hobbies?"),
        ("what do deb and cal like doing for fun", "what do deb and cal hobbies"),
        ("What does Deb like to paint?", "What does Deb like to paint?"),  # a thing named
        ("What does Deb like about her job?", "What does Deb like about her job?"),
        ("What did Deb enjoy?", "What did Deb enjoy?"),  # one time
        ("Name the cities Evan has been to.", "cities Evan has been to."),
        ("Name of Deb's dog?", "Name of Deb's dog?"),
    ],
)
def test_what_a_list_question_searches_for(question, searched):
    assert plain_list(question) == searched


def test_an_echo_said_again_word_for_word_keeps_a_share_of_its_score_like_any_repeat(transcript, data_dir):
    """``Weights.duplicate`` holds for the echoes' bonus too: the same mention said in three sessions is one
    thing told, so the second copy keeps at most half the first's score, the echo's part included (the bonus
    was added after the repeats were counted: three copies as good as one took three places)."""
    again = "Spent Sunday at Clayhouse again, muddy hands."
    sessions(
        transcript,
        [
            [("Mia", "My new hobby is pottery at the Clayhouse studio!"), ("Leo", "Fun, send pictures.")],
            [("Leo", DISTRACTIONS[0]), ("Mia", again)],
            [("Leo", DISTRACTIONS[1]), ("Mia", again)],
            [("Leo", DISTRACTIONS[2]), ("Mia", again)],
            [("Mia", "Picked up my glazed bowl at Clayhouse today."), ("Leo", DISTRACTIONS[3])],
        ],
    )
    with RecallIndex(data_dir, weights=Weights(echo=3.0)) as index:
        hits = index.search(CHAT, "What hobbies does Mia have?", 10)
    copies = [h.score for h in hits if h.content == f"Mia: {again}"]
    assert len(copies) == 3 and copies[0] > 0
    assert copies[1] <= 0.5 * copies[0] + 1e-9 and copies[2] <= 0.25 * copies[0] + 1e-9
