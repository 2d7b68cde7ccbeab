"""Recall quality features: other words for the same thing, who said it, repeats, session dates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory.recall import RecallIndex
from memory.recall.dates import parse_at
from memory.recall.lexicon import base, related
from memory.recall.names import people
from memory.recall.rank import Turn, _near_related, _penalise_repeats
from memory.recall.text import doc_terms, query_terms, word_term
from memory.recall.told import filler
from memory.recall.tuning import Weights

SMALL_TALK = [
    "How was your week?", "Pretty busy, work has been a lot.", "Same here, I need a break.",
    "Let's catch up soon!", "Sounds good, talk later.", "The weather is lovely today.",
    "I made soup for dinner.", "My neighbours are loud again.",
]  # fmt: skip


def write(data_dir: Path, chat: str, turns: list[dict], *, archive: str | None = None) -> None:
    path = data_dir / "chats" / (f"archive/{chat}.{archive}.jsonl" if archive else f"{chat}.jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        for t in turns:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")


def turn(role: str, content: str, at: str | None = "2023-05-08T13:56:00", **extra) -> dict:
    out = {"role": role, "content": content, **extra}
    if at is not None:
        out["at"] = at
    return out


def chatter(n: int, names: tuple[str, str] | None = None) -> list[dict]:
    out = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"{SMALL_TALK[i % len(SMALL_TALK)]} ({i})"
        if names:
            name = names[i % 2]
            out.append(turn(role, f"{name}: {text}", name=name))
        else:
            out.append(turn(role, text))
    return out


@pytest.fixture
def index(data_dir: Path):
    idx = RecallIndex(data_dir)
    yield idx
    idx.close()


def lines(hits) -> list[int]:
    return [h.line for h in hits]


# -- words ------------------------------------------------------------------------------------------


def test_irregular_forms_meet_their_base_form():
    assert base("ran") == "run" and base("bought") == "buy" and base("children") == "child"
    assert base("running") == "running"  # regular forms are the stemmer's job
    assert doc_terms("I ran a 10K") == doc_terms("I run a 10K")
    assert doc_terms("the children") == doc_terms("the child")
    assert [t.text for t in query_terms("When did she run the race?")] == doc_terms("ran race")


def test_a_word_of_the_tense_is_not_searched_as_the_topic(data_dir, index):
    """The words "still" and "currently" tell the tense (memory.recall.query reads them as asking about now), not
    what the question is about: the only word of this question the chat said was "still", and the turns saying it
    (small talk) ranked first (the relevance floor silences them here, but not beside a turn close in meaning, the
    car); now the question has no word of the chat to rank by."""
    write(data_dir, "c", chatter(20))
    write(data_dir, "c", [turn("user", "Ugh and I still haven't done my taxes, still!") for _ in range(3)])
    write(data_dir, "c", [turn("user", "I finally bought a car, no more waiting for the bus in the rain.")])
    write(data_dir, "c", chatter(20))
    assert index.search("c", "Does Jo still rely on public transport?", 3) == []
    with RecallIndex(data_dir, weights=Weights(floor=False)) as ranked:  # the ranking itself, below the floor
        assert ranked.search("c", "Does Jo still rely on public transport?", 3) == []
    assert [t.text for t in query_terms("Is she currently still on the bus?")] == doc_terms("bus")


def test_a_question_in_other_words_finds_the_turn(data_dir, index):
    write(data_dir, "c", chatter(40))
    write(data_dir, "c", [turn("user", "We adopted a beagle puppy last week, she chews everything!")])
    write(data_dir, "c", chatter(40))
    write(data_dir, "c", [turn("user", "I ran a charity race for the children's hospital.")])
    write(data_dir, "c", chatter(20))
    assert 41 in lines(index.search("c", "What pets does she have?", 3))  # pet -> puppy
    assert 82 in lines(index.search("c", "When did she run for charity?", 3))  # run = ran
    assert 82 in lines(index.search("c", "What did she do for the kids hospital?", 3))  # kids -> children
    # without query expansion the general word finds nothing
    with RecallIndex(data_dir, weights=Weights(expand=0.0)) as plain:
        assert 41 not in lines(plain.search("c", "What pets does she have?", 3))


def test_the_words_related_to_related_words_are_searched_too(data_dir):
    """``Weights.twice``: "fit" relates to "exercise", which relates to its kinds ("yoga"); the lexicon has no line
    from "fit" to "yoga". The evidence holds neither "fit" nor "exercise"."""
    assert "yoga" not in related("fit", word_term) and related("exercis", word_term)["yoga"] == 0.6
    assert related("fit", word_term, twice=True)["yoga"] == pytest.approx(0.8 * 0.6)
    write(data_dir, "c", chatter(40))
    write(data_dir, "c", [turn("user", "I've started doing yoga three times a week, it really calms my mind.")])
    write(data_dir, "c", chatter(40))
    for twice in (True, False):  # (the chat never said "stay" or "fit": no relevance floor here)
        with RecallIndex(data_dir, weights=Weights(twice=twice, floor=False)) as idx:
            assert (41 in lines(idx.search("c", "What do I do to stay fit?", 3))) is twice


def test_repeated_small_talk_does_not_fill_the_results(data_dir, index):
    write(data_dir, "c", [turn("user", "Coffee is the only thing keeping me going.") for _ in range(6)])
    write(data_dir, "c", [turn("assistant", "I had coffee with Tom at the station cafe this morning, lovely chat.")])
    write(data_dir, "c", chatter(30))
    assert 7 in lines(index.search("c", "coffee", 3))
    # (the chatter after it starts with a question, which lifts it as news: not counted here)
    with RecallIndex(data_dir, weights=Weights(duplicate=1.0, news=0.0)) as plain:
        assert 7 not in lines(plain.search("c", "coffee", 3))


def test_small_talk_repeated_in_other_case_and_punctuation_is_still_a_repeat(data_dir, index):
    said = [
        "Coffee is the only thing keeping me going.",
        "coffee is the only thing keeping me going",
        "COFFEE is the only thing keeping me going!!",
        "Coffee... is the only thing keeping me going",
    ]
    write(data_dir, "c", [turn("user", text) for text in said])
    write(
        data_dir,
        "c",
        [
            turn("assistant", "I had coffee with Tom at the station cafe this morning, lovely chat."),
            turn("user", "The new place on Fifth Street makes better coffee than the station cafe, Tom says."),
        ],
    )
    write(data_dir, "c", chatter(30))
    assert lines(index.search("c", "coffee", 3)) == [4, 5, 6]  # one of the four, then the two other turns


def test_small_talk_said_again_with_an_aside_is_still_a_repeat(data_dir):
    """``Weights.repeat_within``: the same sentence said again inside a longer message (an aside added), or a
    message said again without its aside, gives its place to another turn; a run of fewer words than that is not
    a repeat ("I keep saying" starts many a message), nor are the same words by the other person."""
    said = [
        turn("user", "I keep saying I'll start exercising more."),
        turn("user", "I keep saying I'll start exercising more. Side note, my fridge made a weird noise again."),
        turn("user", "Side note, my kettle died. I keep saying I'll start exercising more, honestly"),
        turn("assistant", "I keep saying I'll start exercising more. Side note, my fridge made a weird noise."),
        turn("user", "Went for a run before work, exercising in the morning is the best."),
    ]
    write(data_dir, "c", chatter(30) + said + chatter(30))
    with RecallIndex(data_dir, weights=Weights(news=0.0, floor=False)) as idx:
        found = lines(idx.search("c", "exercising", 3))
    assert found[0] == 31 and sorted(found[1:]) == [34, 35]  # the assistant's: the other person's words
    for within in (0, 12):  # the same words only; eight words said again, shorter than 12: 33 keeps its place
        with RecallIndex(data_dir, weights=Weights(news=0.0, floor=False, repeat_within=within)) as idx:
            found = lines(idx.search("c", "exercising", 3))
        assert 33 in found and 34 not in found, within


def test_a_repeat_within_a_longer_message_is_counted_both_ways():
    """``_penalise_repeats`` with ``within``: a message held in a better one (its aside left out) or holding a
    better one keeps ``share`` of its score for each; not the other person's, not a run shorter than ``within``,
    not words that only start the same way."""

    def said(score: float, speaker: str, content: str) -> Turn:
        t = Turn(1, 1, 1, 0, None, None, None, "user", None, speaker, 0, 0, "", content)
        t.score = score
        return t

    turns = [
        said(9, "deb", "I keep saying I'll start exercising more. Side note, my fridge died."),
        said(8, "deb", "I keep saying I'll start exercising more!"),  # held in the first
        said(7, "deb", "Ugh. I KEEP saying I'll start exercising more. Also the weather is awful."),  # holds the second
        said(6, "andy", "I keep saying I'll start exercising more."),  # the other person
        said(5, "deb", "my fridge died"),  # three words
        said(4.5, "deb", "I keep saying I'll call Daniel back."),
        said(4, "deb", "I keep saying I'll call Dan"),  # "Dan" only starts "Daniel"
    ]
    before = {id(t): t.score for t in turns}
    _penalise_repeats(turns, 0.5, within=4)
    assert [t.score / before[id(t)] for t in turns] == [1, 1, 1, 1, 0.5, 1, 0.5]  # sorted again, best first
    assert [t.score for t in turns] == [9, 6, 5, 4.5, 4, 4, 3.5] and turns[4].content.endswith("more!")
    assert turns[6].content.startswith("Ugh")
    turns = [
        said(9, "deb", "I keep saying I'll start exercising more. Side note."),
        said(8, "deb", "I keep saying I'll start exercising more"),
    ]
    _penalise_repeats(turns, 0.5, within=0)  # the same words only
    assert [t.score for t in turns] == [9, 8]


def test_the_same_words_said_by_the_other_person_are_not_a_repeat(data_dir):
    """``Weights.repeat_by_speaker``: Melanie and Caroline both went to the support group: two things told, not
    small talk said twice; Melanie's, below Caroline's, keeps its whole score and comes before a turn that only
    mentions the group."""
    said = [
        turn("user", "Melanie: I went to the support group yesterday, it was so powerful.", name="Melanie"),
        turn("assistant", "Caroline: The support group thing sounds nice, tell me more some day.", name="Caroline"),
        turn("assistant", "Caroline: I went to the support group yesterday, it was so powerful.", name="Caroline"),
    ]
    write(data_dir, "c", chatter(30, ("Melanie", "Caroline")) + said + chatter(30, ("Melanie", "Caroline")))
    for by_speaker, second in ((True, 31), (False, 32)):
        with RecallIndex(data_dir, weights=Weights(repeat_by_speaker=by_speaker)) as idx:
            assert lines(idx.search("c", "Who went to the support group yesterday?", 2))[1] == second, by_speaker


# -- who said it -----------------------------------------------------------------------------------


def test_the_named_speaker_comes_first_also_from_a_name_prefix(data_dir, index):
    said = [
        turn("user", "Melanie: I finished a painting of a lighthouse yesterday."),
        turn("assistant", "Caroline: I finished a painting of a lighthouse too, funny!"),
    ]
    write(data_dir, "c", chatter(30, ("Melanie", "Caroline")) + said + chatter(30, ("Melanie", "Caroline")))
    assert index.search("c", "What did Caroline paint?", 1)[0].line == 32
    assert index.search("c", "What did Melanie paint?", 1)[0].line == 31


def test_a_short_name_stands_for_the_speaker_it_begins(data_dir, index):
    # both of eight terms or more: a question naming someone cuts a message of fewer (Weights.brief_named), and
    # the turn saying "Mel" was the longer one; here only whose name it is tells them apart
    said = [
        turn("user", "Melanie: Caro, I finished a painting of a lighthouse yesterday, near the old harbour."),
        turn("assistant", "Caroline: I finished a painting of a lighthouse too, funny! Mel, you first, by the sea."),
    ]
    write(data_dir, "c", chatter(30, ("Melanie", "Caroline")) + said + chatter(30, ("Melanie", "Caroline")))
    assert index.search("c", "What did Mel paint?", 1)[0].line == 31  # Melanie's, not the turn saying "Mel"
    assert index.search("c", "What did Caro paint?", 1)[0].line == 32


def test_a_two_letter_short_name_inside_the_question_stands_for_its_speaker(data_dir, index):
    said = [
        turn("user", "Gina: I finished a painting of a lighthouse yesterday.", name="Gina"),
        turn("assistant", "Caroline: I finished a painting of a lighthouse too, funny!", name="Caroline"),
    ]
    write(data_dir, "c", chatter(30, ("Gina", "Caroline")) + said + chatter(30, ("Gina", "Caroline")))
    assert index.search("c", "What did Gi paint?", 1)[0].line == 31
    assert index.search("c", "What did Caroline paint?", 1)[0].line == 32


def test_a_nickname_is_the_speaker_the_other_one_calls_so(data_dir, index):
    greet = [
        turn("assistant", "Caroline: Hey Andy! How was your week?", name="Caroline"),
        turn("user", "Andrew: Busy but good, thanks!", name="Andrew"),
        turn("assistant", "Caroline: Thanks, Andy. Talk soon!", name="Caroline"),
        turn("user", "Andrew: Bye!", name="Andrew"),
    ]
    said = [
        turn("user", "Andrew: I finished a painting of a lighthouse yesterday.", name="Andrew"),
        turn("assistant", "Caroline: I finished a painting of a lighthouse too, funny!", name="Caroline"),
    ]
    write(data_dir, "c", greet * 3 + chatter(20, ("Andrew", "Caroline")) + said + chatter(20, ("Andrew", "Caroline")))
    assert index.search("c", "What did Andy paint?", 1)[0].content.startswith("Andrew:")
    assert index.search("c", "What did Caroline paint?", 1)[0].content.startswith("Caroline:")


def said_by(name: str, content: str) -> dict:
    """A message as a messenger export writes it: the sender in ``name`` only, both people in the user role."""
    return turn("user", content, name=name)


LIGHTHOUSE = "I finished a painting of a lighthouse yesterday."


def greetings(caroline: str = "Caroline") -> list[dict]:
    """Caroline (shown as ``caroline``) greeting Andrew by his nickname, "Andy"."""
    return [said_by(caroline, "Hey Andy! How was your week?"), said_by("Andrew", "Busy but good, thanks!"),
            said_by(caroline, "Thanks, Andy. Talk soon!"), said_by("Andrew", "Bye!")]  # fmt: skip


def painted_after(before: list[dict], andrew: str, caroline: str) -> list[dict]:
    """``before``, then Andrew and Caroline (shown as ``andrew`` and ``caroline``) chatting, each telling what they
    painted."""
    chat = [said_by((andrew, caroline)[i % 2], SMALL_TALK[i % len(SMALL_TALK)]) for i in range(30)]
    said = [said_by(andrew, LIGHTHOUSE), said_by(caroline, "I finished a painting of a harbour too, funny!")]
    return before + chat + said + chat


def test_a_renamed_person_is_one_speaker_under_both_names(data_dir, index):
    """Andrew changed his display name to "andr_s" partway: a question naming him, in full or by the nickname
    the friend calls him, prefers what he said under either name."""
    write(data_dir, "c", painted_after(greetings() * 3, "andr_s", "Caroline"))
    for question in ("What did Andrew paint?", "What did Andy paint?"):
        assert index.search("c", question, 1)[0].content == LIGHTHOUSE
    assert index.search("c", "What did Caroline paint?", 1)[0].content.endswith("harbour too, funny!")


def test_a_nickname_is_learned_from_the_friend_under_both_of_her_names(data_dir, index):
    """Caroline, who calls Andrew "Andy", changed her display name to "caro_x" halfway through the greetings."""
    write(data_dir, "c", painted_after(greetings() * 2 + greetings("caro_x") * 2, "Andrew", "caro_x"))
    assert index.search("c", "What did Andy paint?", 1)[0].content == LIGHTHOUSE


def test_which_speaker_names_are_one_person():
    person = people({"andrew", "andr_s", "caroline", "caro 🌸", "jonathan", "joanna", "gi", "gina", "dan", "daniel"})
    assert person["andr_s"] == person["andrew"] == {"andrew", "andr_s"}  # "andr" begins "andrew"
    assert person["caro 🌸"] == {"caroline", "caro 🌸"}
    assert person["jonathan"] == {"jonathan"} and person["joanna"] == {"joanna"}  # "jo" only: two people
    assert person["gi"] == {"gi"} and person["dan"] == {"dan"}  # fewer than four letters tie no names
    assert person["gina"] == {"gina"} and person["daniel"] == {"daniel"}
    members = people({f"user{i}_x" for i in range(50)} | {"user"})  # many people named alike in a group
    assert all(names == {name} for name, names in members.items())


def test_without_names_the_person_is_found_by_how_the_other_greets_them(data_dir, index):
    # no names anywhere: the user is the one the assistant calls "Mel"
    greetings = [
        turn("user", "Hey Caroline! How are you?"), turn("assistant", "Hi Mel! Good, thanks."),
        turn("user", "Thanks, Caroline, that helps."), turn("assistant", "Anytime, Mel!"),
        turn("user", "Bye Caroline!"), turn("assistant", "Take care, Mel."),
    ]  # fmt: skip
    said = [turn("assistant", "I painted a lighthouse at dawn."), turn("user", "I painted a lighthouse at dusk.")]
    write(data_dir, "c", greetings + chatter(30) + said + chatter(10))
    assert index.search("c", "What did Mel paint?", 1)[0].content == "I painted a lighthouse at dusk."
    assert index.search("c", "What did Caroline paint?", 1)[0].content == "I painted a lighthouse at dawn."


# -- sessions and dates --------------------------------------------------------------------------------


def test_written_out_session_dates_are_read():
    assert parse_at("1:56 pm on 8 May, 2023")[1] == 20230508
    assert parse_at("12:09 am on 13 September, 2023") == parse_at("2023-09-13T00:09:00")
    assert parse_at("May 8, 2023 1:56 PM") == parse_at("2023-05-08T13:56:00")
    assert parse_at("8 May 2023")[1] == 20230508
    assert parse_at(1683554160) == parse_at("2023-05-08T13:56:00Z")  # epoch seconds
    for bad in ("31 February, 2023", "13:00 pm on 8 May, 2023", "8 Foo 2023", "soon", "", True, None, -5):
        assert parse_at(bad) == (None, None), bad


def test_sessions_in_archive_files_and_written_dates_are_searched(data_dir, index):
    for i, when in enumerate(("1:56 pm on 8 May, 2023", "10:37 am on 27 June, 2023")):
        turns = [turn("user", t["content"], at=when) for t in chatter(10)]
        if i == 1:
            turns[4] = turn("user", "Our pottery class made a blue vase", at=when)
        write(data_dir, "c", turns, archive=f"2023050{i}T000000Z")
    hits = index.search("c", "What did they make in pottery class?", 1)
    assert (hits[0].file, hits[0].line) == ("c.20230501T000000Z.jsonl", 5)
    assert index.search("c", "pottery in June 2023", 1)[0].line == 5


def test_the_answer_to_a_question_about_it_counts_more_than_a_mere_neighbour(data_dir, index):
    write(data_dir, "c", [
        turn("user", "What did you make at the pottery studio?"),
        turn("assistant", "A little blue bowl, wonky but cute."),
        *chatter(30),
        turn("user", "Pottery studio closed!"),  # shorter: a better match than the question
        turn("assistant", "Oh, a pity."),
        *chatter(10),
    ])  # fmt: skip
    found = lines(index.search("c", "What did she make at the pottery studio?", 10))
    assert 2 in found and 34 not in found  # the floor keeps the answer, not the mere neighbour
    with RecallIndex(data_dir, weights=Weights(floor=False)) as unfloored:
        found = lines(unfloored.search("c", "What did she make at the pottery studio?", 10))
        assert found.index(2) < found.index(34)
    with RecallIndex(data_dir, weights=Weights(answer=0.0, floor=False)) as plain:
        found = lines(plain.search("c", "What did she make at the pottery studio?", 10))
        assert found.index(34) < found.index(2)


# -- the shape of a conversation -------------------------------------------------------------------


def test_what_the_other_one_asks_about_is_news(data_dir, index):
    write(data_dir, "c", [
        turn("user", "I signed up for a pottery class at the studio."),
        turn("assistant", "No way! What did you make there?"),
        *chatter(20),
        turn("user", "The pottery class at the studio is on Mondays."),  # newer, as good a match
        turn("assistant", "Good to know."),
        *chatter(20),
    ])  # fmt: skip
    found = lines(index.search("c", "pottery class studio", 10))
    assert found.index(1) < found.index(23)
    with RecallIndex(data_dir, weights=Weights(news=0.0)) as plain:
        found = lines(plain.search("c", "pottery class studio", 10))
        assert found.index(23) < found.index(1)


def moved(*exchange: dict, newer: tuple[dict, ...] = ()) -> list[dict]:
    """News of a move with ``exchange`` after it (the friend's question and the answer), small talk, the same news
    told again later (as good a match, no question about it: "Nice." and ``newer`` after it), and small talk."""
    return [
        turn("user", "We moved into our new flat in Denver!"),
        *exchange,
        *chatter(20),
        turn("user", "We moved into our new flat in Denver."),
        turn("assistant", "Nice."),
        *newer,
        turn("user", "Quiet weekend otherwise, lots of boxes."),
        *chatter(20),
    ]


def test_a_story_goes_on_in_the_answer_to_the_question_about_it(data_dir, index):
    write(
        data_dir,
        "c",
        moved(
            turn("assistant", "Congrats! How is the neighbourhood?"),
            turn("user", "Quiet, with a park across the street."),
        ),
    )
    query = "moved new flat Denver"
    found = lines(index.search("c", query, 10))
    assert 3 in found and 26 not in found  # the floor keeps the story's answer, not the small talk after it
    with RecallIndex(data_dir, weights=Weights(floor=False)) as unfloored:
        found = lines(unfloored.search("c", query, 10))
        assert found.index(3) < found.index(26)
    with RecallIndex(data_dir, weights=Weights(thread=0.0, floor=False)) as plain:
        found = lines(plain.search("c", query, 10))
        assert found.index(26) < found.index(3)


def test_a_story_goes_on_in_its_answer_across_the_messages_that_only_fill_the_chat(data_dir, index):
    """memory.recall.told.filler: "omg", "lol", "haha" between the news, the question about it and the answer
    do not part them (a chat between people is full of them): the answer is found as above."""
    write(
        data_dir,
        "c",
        moved(
            turn("user", "omg"),
            turn("assistant", "Congrats! How is the neighbourhood?"),
            turn("assistant", "lol"),
            turn("user", "haha ok"),
            turn("user", "Quiet, with a park across the street."),
        ),
    )
    found = lines(index.search("c", "moved new flat Denver", 10))
    assert 6 in found and 29 not in found
    assert not {2, 4, 5} & set(found)  # the fillers themselves tell nothing
    with RecallIndex(data_dir, weights=Weights(skip_fillers=False)) as plain:  # "haha ok" parts them
        assert 6 not in lines(plain.search("c", "moved new flat Denver", 10))


def test_a_story_goes_on_in_an_answer_that_a_message_crossed(data_dir, index):
    """Weights.crossed: one message between the friend's question and the answer (the answerer's "Have a great
    week!", typed while the question came) does not part them: of two turns as good, the story's answer first."""
    write(
        data_dir,
        "c",
        moved(
            turn("assistant", "Congrats! How is the neighbourhood?"),
            turn("user", "Have a great week, by the way!"),
            turn("user", "Quiet, with a park across the street."),
            newer=(turn("user", "Oh and the heater works again."),),  # not next to the newer news
        ),
    )
    query = "moved new flat Denver quiet"
    found = lines(index.search("c", query, 10))
    assert found.index(4) < found.index(28)
    with RecallIndex(data_dir, weights=Weights(crossed=0.0)) as plain:  # only an answer right after the question
        found = lines(plain.search("c", query, 10))
        assert found.index(28) < found.index(4)


def test_a_question_in_the_middle_of_a_message_is_still_asked(data_dir, index):
    """memory.recall.told.asks: the friend's question followed by something else in the same message (a message
    mixing topics) is a question all the same: the story's answer after it is found as above."""
    write(data_dir, "c", moved(
        turn("assistant", "Congrats! How is the neighbourhood? Btw my kettle died on me today."),
        turn("user", "Quiet, with a park across the street."),
    ))  # fmt: skip
    found = lines(index.search("c", "moved new flat Denver", 10))
    assert 3 in found and 26 not in found


def test_an_answer_that_a_message_crossed_completes_its_related_story() -> None:
    """The relevance floor keeps the answer to the question about a related story, a message between or not."""

    def said(line: int, role: str, content: str, related: bool = False) -> Turn:
        out = Turn(line, 1, line, 0, None, None, None, role, None, None, 0, 0, "", content)
        out.related = related
        return out

    story = said(1, "user", "We moved into our new flat in Denver!", related=True)
    asked = said(2, "assistant", "Congrats! How is the neighbourhood?")
    crossing = said(3, "user", "Have a great week, by the way!")
    answer = said(4, "user", "Quiet, with a park across the street.")
    asked.near = {-1: story, 1: crossing, 2: answer}
    answer.near = {-1: crossing, -2: asked}
    assert _near_related(answer, 1.0)
    assert not _near_related(answer, 0.0)
    crossing.related = True  # a message between about the same: that is the answer, this one goes on with it
    assert not _near_related(answer, 1.0)
    crossing.related = False
    answer.near = {-1: asked, -2: story}  # the answer right after the question: the floor keeps it either way
    assert _near_related(answer, 0.0)


def test_what_only_fills_the_chat() -> None:
    def said(content: str, speaker: str | None = None) -> Turn:
        return Turn(1, 1, 1, 0, None, None, None, "user", None, speaker, 0, 0, "", content)

    for text in ["lol", "omg", "sooo true", "😂", "haha ok", "ok so guess what", "hahaha", "ㅋㅋㅋ", "헐 대박"]:
        assert filler(said(text)), text
    assert filler(said("deb: lol", "deb"))  # the "Name: " prefix is not a word of it
    for text in ["Yellow!", "no", "omg what?", "lol ok what do you think?", "I got the job", "Quiet, with a park"]:
        assert not filler(said(text)), text


def test_a_question_tells_less_than_a_statement(data_dir, index):
    write(data_dir, "c", [
        turn("user", "Melanie bought a red bicycle for the commute."),
        *chatter(20),
        turn("user", "Melanie bought a red bicycle for the commute?"),  # newer, as good a match
        *chatter(20),
    ])  # fmt: skip
    found = lines(index.search("c", "red bicycle commute", 10))
    assert found.index(1) < found.index(22)
    with RecallIndex(data_dir, weights=Weights(asking=0.0)) as plain:
        found = lines(plain.search("c", "red bicycle commute", 10))
        assert found.index(22) < found.index(1)
