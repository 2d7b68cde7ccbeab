"""Recall: every old conversation of a chat searchable, brought back automatically and on demand.

The transcripts stay the source of truth; this package keeps a derived SQLite FTS5 index of
them in ``$DATA_DIR/recall.sqlite3`` (mode 0600, WAL) and searches it. Deleting that file
loses nothing: it is rebuilt from the transcripts (also when corrupt or of another version).

API (all of it safe to call from threads, e.g. through ``asyncio.to_thread``; a RecallIndex opens
at most ``connections`` (3) SQLite connections whatever the number of threads)::

    index = RecallIndex(data_dir)
    index.sync(chat_id) -> int        # index everything new in the live and archived transcripts
                                      # (~1 ms, a stat per file when nothing is new; as long as the backlog)
    index.catch_up(chat_id) -> IndexStatus
                                      # what a question's path calls (search and related do): index what is
                                      # new if it is at most sync_budget bytes (256 KiB), else have it built
                                      # by the background builder (memory.recall.build: a worker process)
                                      # and return at once
    index.status(chat_id) -> IndexStatus
                                      # ready, or how much is indexed (done/total bytes, percent, building)
    index.search(chat_id, query, limit=5, *, before=None, today=None) -> list[Hit]
                                      # best first over the whole history (what is indexed); catches up first;
                                      # before: a byte offset in the LIVE transcript, live turns at or
                                      # after it are left out (archived ones always count);
                                      # today: anchors "yesterday" / "지난주" in the query
    index.related(chat_id, text, limit=5, *, before=None, today=None) -> list[Hit]
                                      # the automatic recall: the best hits that are Hit.relevant (nothing
                                      # for "hi" / "안녕"); a quick search (fewer candidates, only turns that
                                      # can be relevant): 1-2 ms at any history length (search: 5-15 ms)
    inspect_index(data_dir) -> IndexReport
                                      # read-only: the index against the transcripts (problems, notes)
    verify_index(data_dir) -> list[str]
                                      # its problems only (the doctor's hook; [] = ok)
    related_block(hits, tz) -> str | None
                                      # the "[관련 기억 / Related memories]" block, None for no hits
    hit_lines(hits, tz, width=200) -> list[str]
                                      # "YYYY-MM-DD HH:MM who: text" per hit, for /search answers
    index.close()

``Hit``: ``file`` (None for the live transcript, else the archive file name), ``line`` (1-based
physical line), ``offset``, ``at``, ``role``, ``content`` (text), ``score``, ``name``,
``relevance``/``matched`` (share / weight of the query's terms it holds), ``context`` (the
neighbouring turn that completes the exchange), ``to_json()``.

Suggested defaults for the wiring: ``RECALL_TURNS=5`` hits in the automatic block (0: off),
``before`` = the offset of the first message sent verbatim (or of the first one the summary
does not cover), the ``search_memory`` tool with ``limit`` 5 (at most 20).

With ``RecallIndex(data_dir, meaning=memory.recall.meaning.load())`` turns are also found by meaning
(sentence vectors made in the background; ``index.embed(chat)`` makes the missing ones now).

Modules: ``meaning`` (sentence vectors: the model, their table, the search by meaning), ``meaning_index``
(RecallIndex's side of it: the vectors in memory, the thread that makes them, a question's vector), ``text``
(terms: Porter-stemmed English, Hangul bigrams), ``stem``, ``lexicon`` (irregular forms, related
words for query expansion), ``dates`` (dates in queries, session dates written out), ``build`` (the
background builder of long histories), ``worker`` (the process it runs them in), ``store`` (SQLite
schema: one FTS5 table for every chat, each chat in its own range of rowids; incremental indexing),
``lines`` (transcript lines read and split into terms before the write lock; who said a turn),
``plan`` (the files on disk against the index; renamed and deleted files followed), ``query`` (a
query read against a chat: terms, related terms, idf on the chat's own statistics, dates, speakers,
tense), ``names`` (whom a name in a query means, learned from how the people greet each other),
``candidates`` (the turns worth scoring, from a bounded number of postings), ``rank`` (BM25 scores
re-scored with neighbouring turns, the session, dates, speaker and recency), ``spread`` (for a question
asking for a list, the turns of other days that echo the best ones), ``tuning`` (its
weights, and a thorough and a quick effort), ``pool`` (the bounded connections), ``index``
(RecallIndex), ``hit`` (Hit, what a search returns), ``block`` (the related-memories block),
``verify`` (the index against the transcripts, for the doctor).

Transcripts converted from elsewhere work as well: a speaker's name in ``name`` or as a
``"Name: "`` prefix (or, with neither, inferred from how the two roles greet each other), both
people under one role, sessions as separate archived files, ``at`` missing or written out
("1:56 pm on 8 May, 2023"). Quality and speed: bench.recall_eval (``--related``: the automatic
recall), bench.recall_speed (a chat of a million messages), bench.recall_chats (10,000 chats).
"""

from memory.recall.block import hit_lines, related_block
from memory.recall.build import IndexStatus
from memory.recall.hit import Hit
from memory.recall.index import RecallIndex
from memory.recall.verify import IndexReport, inspect_index, verify_index

__all__ = [
    "Hit",
    "IndexReport",
    "IndexStatus",
    "RecallIndex",
    "hit_lines",
    "inspect_index",
    "related_block",
    "verify_index",
]
