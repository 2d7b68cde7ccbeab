"""A reply stored with the message it answers quoted before it (as the bot stores a Telegram reply and the
importer stores one, memory.imports.formats): its own words are what it said, and the quote says which question
it answers (memory.recall.text.split_quote, memory.recall.rank)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memory.content import quote_block, unquote_block
from memory.recall import RecallIndex, hit_lines, related_block
from memory.recall.block import readable
from memory.recall.rank import Turn
from memory.recall.text import QUOTE, doc_terms, split_quote, turn_terms
from memory.recall.told import asks, discloses, said, words
from memory.transcript import Transcript
from tests.test_recall_meaning import ConceptEmbedder, msg
from tests.test_recall_quality import SMALL_TALK, turn, write
from tests.test_recall_quality import said_by as by

ASKED = "How's the new flat? I hope the heating works"
OWN = "Quiet, with a park nearby"
REPLY = f"> Mom: {ASKED}\n\n{OWN}"


def stored(name: str, content: str, line: int = 1) -> Turn:
    """A turn as the index gives it to the ranking."""
    terms, _ = turn_terms(*split_quote(content))
    return Turn(line, 1, line, 0, None, None, None, "user", name, name.lower(), 1, 0, terms, content)


def test_a_reply_is_split_from_the_quote_before_it():
    assert split_quote(REPLY) == (f"> Mom: {ASKED}\n", OWN)
    two = "> Mom: first line\n>\n> second line\n\nMinsu: ok then"  # the bot's quote of several lines
    assert split_quote(two) == ("> Mom: first line\n>\n> second line\n", "Minsu: ok then")
    for text in (OWN, "> a quote and nothing after it", ">_< oh no", "5 > 3\n\nyes"):
        assert split_quote(text) == ("", text)
    terms, own = turn_terms(*split_quote(REPLY))
    assert own == len(doc_terms(OWN)) and terms.split(QUOTE)[1].split() == doc_terms(f"Mom: {ASKED}")


def test_a_quote_is_read_back_as_it_was_written():
    """memory.content.unquote_block undoes quote_block (what /search and the related memories show of a quote)."""
    for text in ("Mom: first line\n\n  second line, indented", "> already a quote", "one line", "a\n>b"):
        assert unquote_block(quote_block(text)) == text
    assert readable(f"> Mom: first line\n>\n> second line\n\n{OWN}", 200) == f"{OWN} (↩ Mom: first line second line)"


def test_a_reply_tells_and_asks_with_its_own_words_only():
    reply, after = stored("Minsu", REPLY), stored("Mom", "Lovely!", 2)
    assert said(reply) == OWN and words(reply) == len(doc_terms(OWN))
    assert not asks(reply, after)  # the quote asks; the reply does not
    assert not discloses(reply)  # "I hope" is Mom's, quoted


def chat(data_dir: Path) -> None:
    small = [by(("Mom", "Minsu")[i % 2], SMALL_TALK[i % len(SMALL_TALK)]) for i in range(24)]
    flat = [by("Mom", ASKED), *small[:6], by("Minsu", REPLY)]  # other messages crossed the answer
    write(data_dir, "c", small + flat + small + [by("Minsu", "The heating at the office is broken, freezing!")])


def test_a_reply_answers_the_question_it_quotes_however_far_back(data_dir):
    chat(data_dir)
    with RecallIndex(data_dir) as index:
        answered = [h.content for h in index.search("c", "What did Minsu say about the new flat?", 2)]
        assert REPLY in answered  # beside the question, though no word of its own is the question's
        # the quote's words are Mom's: the question itself comes before the reply quoting it
        found = [h.content for h in index.search("c", "new flat", 5)]
        assert found.index(ASKED) < found.index(REPLY)
        # recalled unasked before an answer too: a reply is about what it answers
        assert REPLY in [h.content for h in index.related("c", "How is the new flat?", 5)]


def test_a_reply_is_embedded_by_its_own_words(data_dir):
    Transcript(data_dir).append("7", [msg("user", "Any dinner plans?"), msg("user", "> Any dinner plans?\n\nSoup!")])
    embedder = ConceptEmbedder()
    with RecallIndex(data_dir, meaning=embedder) as index:
        index.sync("7")
        assert index.embed("7") == 2
    assert embedder.embedded == ["Any dinner plans?", "Soup!"]


def test_a_name_said_in_a_quote_is_not_the_replys(data_dir):
    """Caroline greets Melanie as "Lani"; Melanie's replies quote the greetings: Lani is still who Caroline calls so."""
    greet = ["Hey Lani! How was your week?", "Thanks, Lani. Talk soon!", "Morning Lani! Coffee later?"]
    turns = []
    for text in greet:
        turns += [by("Caroline", text), by("Melanie", f"> Caroline: {text}\n\nSure, thanks Caroline!")]
    painted = "I finished a painting of a lighthouse yesterday, near the old harbour."
    turns += [by("Melanie", painted), by("Caroline", "I finished a painting of a lighthouse too, by the pier!")]
    write(data_dir, "c", turns + [by(("Melanie", "Caroline")[i % 2], SMALL_TALK[i % 8]) for i in range(16)])
    with RecallIndex(data_dir) as index:
        assert index.search("c", "What did Lani paint?", 1)[0].content == painted


def test_a_reply_is_shown_by_its_own_words_then_what_it_answers(data_dir):
    long_question = "How's the new flat? " + "Tell me everything about the neighbours, " * 12
    write(data_dir, "c", [by("Mom", long_question), by("Minsu", f"> Mom: {long_question}\n\n{OWN}")])
    with RecallIndex(data_dir) as index:
        hits = index.search("c", "new flat", 2)
    line = next(x for x in hit_lines(hits, "Asia/Seoul", width=160) if "Minsu" in x)
    assert f"user (Minsu): {OWN} (↩ Mom: How's the new flat? Tell me everything" in line
    assert line.endswith("…)")  # the quote is cut to QUOTE_LINE_CHARS, never the reply's own words
    block = related_block(hits, "Asia/Seoul")
    assert block is not None and f"user (Minsu): {OWN} (↩ Mom: How's the new flat?" in block


def test_a_reply_without_a_name_field_is_its_own_speakers(data_dir):
    """A converted chat names the sender in a "Name: " prefix only: a reply's follows the quote."""
    write(
        data_dir,
        "c",
        [turn("user", "Mom: How's the new flat?"), turn("user", f"> Mom: How's the new flat?\n\nMinsu: {OWN}")],
    )
    with RecallIndex(data_dir) as index:
        index.search("c", "flat", 1)
    with sqlite3.connect(data_dir / "recall.sqlite3") as conn:
        assert [r[0] for r in conn.execute("SELECT speaker FROM turns ORDER BY id")] == ["mom", "minsu"]
