"""Recall quality: how many evidence turns come back in the first 1 / 5 / 10 results.

Two generators of long two-person conversations with questions whose evidence turns are known:
``facts`` (bench/recall_gen.py: planted, changed and paraphrased facts among small talk) and
``persona`` (bench/recall_persona.py: two friends telling their lives over months, in the manner
of public long-term conversational memory benchmarks, written in several transcript layouts).
The transcripts go into a temp DATA_DIR and every question is asked through the search code path
of ``python -m bot search`` (bot.cli.search.search_json), with:

- ``plain BM25``: Okapi BM25 over single turns, words split on non-letters, no stemming or
  stopwords (computed here, the textbook baseline);
- ``index BM25``: our index and terms (stemming, Hangul bigrams, stopwords), single turns only;
- ``recall``: our ranking (see memory.recall.rank).

recall@k = evidence turns found in the first k results / all evidence turns (a neighbouring turn
that is returned takes a place in the k like any other). Also runs the real CLI once
(``python -m bot search --stdin``) on one conversation and checks it returns the same lines.

    python -m bench.recall_eval [--gen facts|persona|both] [--seeds 1-6] [--style named,plain]
                                [--no-cli] [--ablate] [--related] [--pad N] [--easy] [--typed]
                                [--embed-cache FILE]

``--style``: facts: named, plain; persona: also oneside, sessions, rawdate, nodate, and ``real``
(bench.recall_real: nicknames, a renamed sender, misspelt names, bursts, mixed messages, photos with only a
caption, both people in the user role), ``typos``: ``real`` with typing errors in the words of 30% of
the messages, ``replies``: ``real`` with answers sent as Telegram replies, the question quoted before
them, and ``ko``: the ``named`` layout in Korean (bench.recall_persona_ko). Tune on
seeds 1-6; 7-12 are the held-out part, reported.
``--ablate`` adds one column per ranking signal turned off.
``--related`` scores the automatic recall instead (``RecallIndex.related``, the fast path that fills
the related-memories block before every answer) against the thorough ``search`` with the same
limit (5): recall@1/5 of the evidence turns among its hits, and among its hits with the turns they
bring along (``Hit.context``, also in the block); the share of questions it answers with nothing;
and the median time of a call of each.
``--typed`` asks every question as typed in a hurry: in lower case, without its question mark.
``--easy`` leaves out the persona questions of bench.recall_persona_hard (asked in words the
lexicon does not relate to their evidence), bench.recall_persona_spread, bench.recall_persona_when
(the "when" questions in other words, naming the month, in other forms, or asking how long),
bench.recall_persona_single (one fact in other words) and bench.recall_persona_lists (lists in other forms, and
what someone likes doing), as before they were added.
``--pad N`` puts N older messages of generated chat (bench.recall_speed's Zipf words and everyday
English, dated years before) in an archived transcript of every conversation, so that the
questions are asked of a long history where their words are common (``plain BM25`` does not see
the padding).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from bench import recall_gen, recall_persona, recall_persona_ko, recall_real
from bench.embed_cache import CachedEmbedder
from bench.recall_speed import write_chat
from bot.cli.search import search_json
from memory.recall import RecallIndex
from memory.recall import meaning as meanings
from memory.recall.tuning import Weights

KS = (1, 5, 10)
EMBEDDER: meanings.Embedder | None = None  # recall by meaning (--meaning), set by main()
Line = tuple[str | None, int]  # (archived file name or None, 1-based line)


@dataclass
class Case:
    """One conversation as the evaluation sees it: its turns by line, its questions."""

    chat: str
    turns: dict[Line, str]
    questions: list[tuple[str, str, list[Line]]]  # (question, kind, evidence lines)
    write: object  # (data_dir) -> None
    never: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (question, kind): never answered


def make_case(gen: str, seed: int, style: str, hard: bool = True) -> Case:
    if gen == "facts":
        conv = recall_gen.generate(seed, style=style)
        turns = {(None, i + 1): str(m["content"]) for i, m in enumerate(conv.lines)}
        qs = [(q.text, q.kind, [(None, n) for n in q.evidence]) for q in conv.questions]
        return Case(conv.chat, turns, qs, lambda d, c=conv: recall_gen.write(c, d))
    if style == "ko":
        pconv = recall_persona_ko.generate_ko(seed, hard=hard)
    elif style in ("real", "typos", "replies"):
        pconv = recall_real.generate(seed, hard=hard, typos=style == "typos", replies=style == "replies")
    else:
        pconv = recall_persona.generate(seed, layout=style, hard=hard)
    turns = {(f, i + 1): str(m["content"]) for f, lines in pconv.files.items() for i, m in enumerate(lines)}
    qs = [(q.text, q.kind, list(q.evidence)) for q in pconv.questions]
    return Case(pconv.chat, turns, qs, lambda d, c=pconv: recall_persona.write(c, d), pconv.never)


_PLAIN: dict[int, tuple[list[Line], list[Counter[str]], Counter[str], float]] = {}


def _plain_docs(case: Case) -> tuple[list[Line], list[Counter[str]], Counter[str], float]:
    """The turns as term counts, their document frequencies and average length (cached per case)."""
    if id(case) not in _PLAIN:
        keys = list(case.turns)
        words = [re.findall(r"\w+", case.turns[k].lower()) for k in keys]
        df: Counter[str] = Counter()
        for w in words:
            df.update(set(w))
        _PLAIN[id(case)] = (keys, [Counter(w) for w in words], df, sum(len(w) for w in words) / len(words))
    return _PLAIN[id(case)]


def plain_bm25(case: Case, question: str, limit: int) -> list[Line]:
    """Textbook Okapi BM25 (k1=1.2, b=0.75) over single turns."""
    keys, docs, df, avgdl = _plain_docs(case)
    n = len(docs)
    q = set(re.findall(r"\w+", question.lower()))
    scores = []
    for i, tf in enumerate(docs):
        s = 0.0
        dl = tf.total()
        for t in q:
            if tf[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * tf[t] * 2.2 / (tf[t] + 1.2 * (0.25 + 0.75 * dl / avgdl))
        if s > 0:
            scores.append((s, i))
    scores.sort(key=lambda x: (-x[0], x[1]))
    return [keys[i] for _, i in scores[:limit]]


NEVER = "never:"  # found[method][NEVER + kind]: 1 per question never answered in the chat that brought nothing


def evaluate(cases: list[Case], data_dir: Path, methods: dict[str, Weights | None]) -> dict[str, dict[str, list[int]]]:
    """found[method][kind] = list of ranks (0 = not in the first 10) per evidence turn; and
    found[method][NEVER + kind] = 1 (nothing found) or 0 per question whose answer was never in the chat."""
    found: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    indexes = {
        name: RecallIndex(data_dir, weights=w, meaning=EMBEDDER if w.meaning > 0 else None)
        for name, w in methods.items()
        if w is not None
    }
    try:
        for case in cases:
            for idx in indexes.values():
                idx.sync(case.chat)
                idx.embed(case.chat)  # the vectors of recall by meaning (made once: one index file)
            for text, kind, evidence in case.questions:
                results: dict[str, list[Line]] = {}
                for name, w in methods.items():
                    if w is None:
                        results[name] = plain_bm25(case, text, 10)
                    else:
                        hits = search_json(indexes[name], case.chat, text, 10, date(2026, 11, 29))
                        results[name] = [(r.get("file"), r["line"]) for r in hits]
                for name, lines in results.items():
                    for ev in evidence:
                        rank = lines.index(ev) + 1 if ev in lines else 0
                        found[name][kind].append(rank)
                        found[name]["all"].append(rank)
            for text, kind in case.never:
                for name, w in methods.items():
                    if w is None:
                        nothing = not plain_bm25(case, text, 10)
                    else:
                        nothing = not search_json(indexes[name], case.chat, text, 10, date(2026, 11, 29))
                    found[name][NEVER + kind].append(int(nothing))
                    found[name][NEVER + "all"].append(int(nothing))
    finally:
        for idx in indexes.values():
            idx.close()
    return found


Found = dict[str, dict[str, list[int]]]


def evaluate_related(cases: list[Case], data_dir: Path, limit: int = 5) -> tuple[Found, dict[str, float]]:
    """found[method][kind] as in ``evaluate`` for the thorough search and the automatic recall (at
    ``limit``), and {method: median seconds per call, "empty": share of questions related() left empty}."""
    found: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    times: dict[str, list[float]] = defaultdict(list)
    empty = 0
    louder = 0  # questions for which related() brought something and the search (at ``limit``) nothing
    never_empty: list[bool] = []  # per question never answered in the chat: whether related() brought nothing
    today = date(2026, 11, 29)
    with RecallIndex(data_dir, meaning=EMBEDDER) as idx:
        for case in cases:
            idx.sync(case.chat)
            idx.embed(case.chat)
            for text, kind, evidence in case.questions:
                t0 = time.perf_counter()
                searched = idx.search(case.chat, text, limit, today=today, sync=False)
                t1 = time.perf_counter()
                related = idx.related(case.chat, text, limit, today=today)
                t2 = time.perf_counter()
                times["search"].append(t1 - t0)
                times["related"].append(t2 - t1)
                empty += not related
                louder += bool(related) and not searched
                lines = {
                    "search": [[(h.file, h.line)] for h in searched],
                    "related": [[(h.file, h.line)] for h in related],
                    "related+context": [[(h.file, h.line), *((c.file, c.line) for c in h.context)] for h in related],
                }
                for name, ranked in lines.items():
                    for ev in evidence:
                        rank = next((i + 1 for i, group in enumerate(ranked) if ev in group), 0)
                        found[name][kind].append(rank)
                        found[name]["all"].append(rank)
            for text, _kind in case.never:
                related = idx.related(case.chat, text, limit, today=today)
                never_empty.append(not related)
                louder += bool(related) and not idx.search(case.chat, text, limit, today=today, sync=False)
    stats = {name: statistics.median(v) for name, v in times.items()}
    stats["empty"] = empty / max(1, sum(len(c.questions) for c in cases))
    stats["never empty"] = sum(never_empty) / len(never_empty) if never_empty else -1.0
    stats["louder"] = louder
    return found, stats


def related_table(found: dict[str, dict[str, list[int]]], stats: dict[str, float], title: str) -> None:
    names = list(found)
    print(f"\n{title}")
    print(f"{'questions':<11} {'evidence':>8}  " + "  ".join(f"{n:>16}" for n in names))
    print(f"{'':<11} {'':>8}  " + "  ".join(f"{'@1     @5':>16}" for _ in names))
    for kind in ["all"] + sorted(k for k in found[names[0]] if k != "all"):
        cells = [f"{'  '.join(f'{100 * recall_at(found[n][kind], k):5.1f}' for k in (1, 5)):>16}" for n in names]
        print(f"{kind:<11} {len(found[names[0]][kind]):>8}  " + "  ".join(cells))
    s5, r5 = recall_at(found["search"]["all"], 5), recall_at(found["related"]["all"], 5)
    print(
        f"related@5 {100 * r5:.1f}% vs search@5 {100 * s5:.1f}% ({r5 / max(s5, 1e-9):.2f}x); "
        f"with context {100 * recall_at(found['related+context']['all'], 5):.1f}%; "
        f"empty for {100 * stats['empty']:.0f}% of the questions{stats_never(stats)}; median per call: related "
        f"{stats['related'] * 1e3:.2f} ms, search {stats['search'] * 1e3:.2f} ms; it brought something where the "
        f"search found nothing for {stats['louder']:.0f} questions"
    )


def stats_never(stats: dict[str, float]) -> str:
    """ " (for N% of those never answered in the chat)", when there were such questions."""
    if stats["never empty"] < 0:
        return ""
    return f" (for {100 * stats['never empty']:.0f}% of those never answered in the chat)"


def nothing(flags: list[int]) -> float:
    """The share of questions never answered in the chat that found nothing."""
    return sum(flags) / len(flags) if flags else 0.0


def recall_at(ranks: list[int], k: int) -> float:
    return sum(1 for r in ranks if 0 < r <= k) / len(ranks) if ranks else 0.0


def table(found: dict[str, dict[str, list[int]]], title: str) -> None:
    names = list(found)
    width = max(22, *(len(n) for n in names))
    print(f"\n{title}")
    print(f"{'questions':<11} {'evidence':>8}  " + "  ".join(f"{n:>{width}}" for n in names))
    print(f"{'':<11} {'':>8}  " + "  ".join(f"{'@1    @5   @10':>{width}}" for _ in names))
    kinds = ["all"] + sorted(k for k in found[names[0]] if k != "all" and not k.startswith(NEVER))
    for kind in kinds:
        cells = []
        for n in names:
            r = found[n][kind]
            cells.append(f"{'  '.join(f'{100 * recall_at(r, k):5.1f}' for k in KS):>{width}}")
        print(f"{kind:<11} {len(found[names[0]][kind]):>8}  " + "  ".join(cells))
    never = sorted(k for k in found[names[0]] if k.startswith(NEVER))
    if never:
        print("questions never answered in the chat: share that found nothing (the relevance floor)")
        for kind in never:
            cells = [f"{100 * nothing(found[n][kind]):>{width}.1f}" for n in names]
            print(f"{kind[len(NEVER) :]:<11} {len(found[names[0]][kind]):>8}  " + "  ".join(cells))
    base = recall_at(found[names[0]]["all"], 10)
    ours = "recall" if "recall" in found else names[-1]
    best = recall_at(found[ours]["all"], 10)
    print(f"recall@10: {ours} {100 * best:.1f}% vs {names[0]} {100 * base:.1f}% ({best / max(base, 1e-9):.2f}x)")


def check_cli(case: Case, data_dir: Path) -> None:
    """Run the real ``python -m bot search --stdin`` and compare with the in-process results."""
    queries = [q for q, _, _ in case.questions]
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
        "RECALL_MEANING": "on" if EMBEDDER is not None else "off",
    }
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "search", "--chat", case.chat, "--limit", "10", "--stdin",
         "--data-dir", str(data_dir)],
        input="\n".join(queries) + "\n", capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    elapsed = time.perf_counter() - t0
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(out) == len(queries), (len(out), len(queries))
    with RecallIndex(data_dir, meaning=EMBEDDER) as idx:  # the vectors the CLI used: those in the index
        for q, got in zip(queries, out, strict=True):
            assert got["query"] == q
            want = [(r.get("file"), r["line"]) for r in search_json(idx, case.chat, q, 10, None)]
            assert [(r.get("file"), r["line"]) for r in got["results"]] == want, q
    print(
        f"CLI: python -m bot search --stdin answered {len(queries)} queries in {elapsed:.2f}s, "
        "the same lines as in-process"
    )


def seeds_arg(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += range(int(a), int(b) + 1)
        else:
            out.append(int(part))
    return out


ABLATIONS = {
    "-expand": {"expand": 0.0},
    "-repeats": {"duplicate": 1.0},
    "-answer": {"answer": 0.0, "thread": 0.0},
    "-thread": {"thread": 0.0},
    "-news": {"news": 0.0},
    "-asking": {"asking": 0.0},
    "-neighbours": {"neighbour": 0.0, "neighbour2": 0.0},
    "-session": {"session": 0.0},
    "-speaker": {"speaker": 0.0},
    "-recency": {"recency": 0.0, "tense": 0.0},
}


STEPS: dict[
    str, dict[str, object]
] = {  # --steps: the ranking without each step of issue 32 (memory.recall.spread, rank)
    "no echo": {"echo": 0.0},
    "echo ungated": {"gate": False},
    "no echo for guesses": {"echo_guess": False},  # ... the echoes for a guess about someone named too
    "no keep": {"keep": 0},
    "no disclose": {"disclose": 0.0},  # a guess about someone: what they told of themselves (memory.recall.rank)
    "floor without priors": {"disclose_floor": False},  # ... not counted by the relevance floor
    "no brief": {"brief": 0.0},  # ... and a short message's score cut (it tells little of a life)
    "others in full": {"others": 1.0},  # ... and the turns of others than the person it names kept as they are
    "guess held": {"guess_related": False},  # a guess about someone named held to the floor's confident turn
    "related once": {"twice": False},  # a query word's related words only, not theirs (memory.recall.lexicon)
    "echoes as before": {"echo": 0.3, "echo_top": 5, "echo_plain": 1.0},  # 5 anchors, 0.3, plain terms in full
    "two as any": {"pair": False},  # a question naming two people not weighed by what they told (ninth round)
    "short named in full": {"brief_named": 0.0},  # any other question naming someone: no cut of a short message
    "meaning as any": {"meaning_lived": 0.0},  # a list, a guess, two people: the meaning weighed as for any question
    "repeats across people": {"repeat_by_speaker": False},  # the same words by the other person: a repeat too
    "repeats word for word only": {"repeat_within": 0},  # not a message saying a better one's again (17th round)
    "fillers as turns": {"skip_fillers": False},  # "lol", "omg" part a question from its answer (twelfth round)
    "answers right after only": {"crossed": 0.0},  # a message crossing the answer parts it from the question (13th)
    "questions as written": {"lower": False},  # the model reads the question's capitals too (fourteenth round)
    "typed as they are": {"cased": 0},  # a question without capitals: its names not looked up (with --typed)
    "quotes unlinked": {"quoted": 0.0},  # a reply's quote not the question it answers (--style replies; 15th)
    "places as any": {"place": 0.0},  # a question asking where: a turn naming a place not preferred (18th round)
    "when as any": {"when_lived": False},  # a question asking when someone did something: not what they told (19th)
    "unsaid as any": {"unsaid_lived": False},  # a fact in other words: not what its person told (20th round)
    "Korean fact in full": {"fact_ko": 1.0},  # a Korean question for a fact held to all of the rule's share (20th)
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gen", choices=("facts", "persona", "both"), default="both")
    parser.add_argument("--seeds", type=seeds_arg, default=seeds_arg("1-6"))
    parser.add_argument("--style", default="named,plain", help="comma-separated layouts (see above)")
    parser.add_argument("--no-cli", action="store_true", help="skip the run through the real CLI")
    parser.add_argument("--ablate", action="store_true", help="also rank with each signal turned off")
    parser.add_argument("--steps", action="store_true", help="also rank with each step tried for issue 32")
    parser.add_argument("--quiet", action="store_true", help="no per-seed lines")
    parser.add_argument(
        "--fact",
        type=lambda v: [float(x) for x in v.split(",")],
        default=[],
        help="also rank with these floors for questions asking for a fact (Weights.fact; 0: none)",
    )
    parser.add_argument("--related", action="store_true", help="score the automatic recall (related) at 5")
    parser.add_argument("--typed", action="store_true", help="ask every question in lower case, without '?'")
    parser.add_argument(
        "--easy",
        action="store_true",
        help="persona: without the harder questions (bench.recall_persona_hard, _spread, _when, _single, _lists)",
    )
    parser.add_argument("--pad", type=int, default=0, help="older messages in an archive of every conversation")
    parser.add_argument("--meaning", choices=("on", "off"), default="on", help="recall by meaning (default on)")
    parser.add_argument("--embed-cache", type=Path, help="keep the turns' vectors in this file across runs")
    args = parser.parse_args(argv)
    global EMBEDDER
    EMBEDDER = meanings.load(args.meaning == "on", threads=os.cpu_count() or 1)
    if EMBEDDER is not None and args.embed_cache:
        EMBEDDER = CachedEmbedder(EMBEDDER, args.embed_cache)
    if args.related:
        return main_related(args)
    methods: dict[str, Weights | None] = {"plain BM25": None, "index BM25": Weights.bm25()}
    if args.ablate:
        for name, change in ABLATIONS.items():
            methods[name] = dataclasses.replace(Weights(), **change)
    if EMBEDDER is not None:
        methods["words only"] = Weights(meaning=0.0)  # the ranking before recall by meaning
    methods["no floor"] = Weights(floor=False)  # the ranking before the relevance floor
    for name, change in STEPS.items() if args.steps else ():
        methods[name] = dataclasses.replace(Weights(), **change)
    for floor in args.fact:
        methods[f"fact {floor:g}"] = Weights(fact=floor)
    methods["recall"] = Weights()
    summary = []
    cli_checked: set[str] = set()
    for gen, style, cases, data_dir in datasets(args):
        turns = sum(len(c.turns) for c in cases)
        qs = sum(len(c.questions) for c in cases)
        found = evaluate(cases, data_dir, methods)
        table(found, f"{describe(gen, style, cases, args.seeds)}, {turns} turns, {qs} questions")
        per_seed = []
        for seed, case in zip(args.seeds, cases, strict=True):
            one = evaluate([case], data_dir, methods)
            per_seed.append({n: recall_at(one[n]["all"], 10) for n in one})
            if not args.quiet:
                cells = "  ".join(f"{n} {100 * recall_at(one[n]['all'], 10):.1f}" for n in one)
                print(f"  seed {seed}: recall@10 {cells}")
        ours = [p["recall"] for p in per_seed]
        base = [p["index BM25"] for p in per_seed]
        at10 = {n: recall_at(found[n]["all"], 10) for n in ("plain BM25", "index BM25", "recall")}
        summary.append((gen, style, *at10.values(), min(ours), max(ours), min(base), max(base)))
        if not args.no_cli and gen not in cli_checked:  # once per generator, on its first style
            cli_checked.add(gen)
            check_cli(cases[0], data_dir)
    print("\nrecall@10 (per-seed min-max)")
    print(f"{'generator':<9} {'style':<9} {'plain BM25':>10} {'index BM25':>18} {'recall':>18}")
    for gen, style, p, i, r, rlo, rhi, ilo, ihi in summary:
        print(f"{gen:<9} {style:<9} {100 * p:>9.1f}% {100 * i:>6.1f}% ({100 * ilo:.0f}-{100 * ihi:.0f}) "
              f"{100 * r:>6.1f}% ({100 * rlo:.0f}-{100 * rhi:.0f})")  # fmt: skip
    return 0


def pad(case: Case, data_dir: Path, messages: int, seed: int) -> None:
    """An archived transcript of ``messages`` generated older messages for ``case``'s chat."""
    if messages > 0:
        path = data_dir / "chats" / "archive" / f"{case.chat}.00000000T000000Z-pad.jsonl"
        write_chat(path, messages, seed=1000 + seed, year=2015)


def datasets(args: argparse.Namespace) -> Iterator[tuple[str, str, list[Case], Path]]:
    """Each generator and style asked for: (gen, style, conversations, a temp DATA_DIR holding them)."""
    for gen in ("facts", "persona") if args.gen == "both" else (args.gen,):
        for style in [s for s in args.style.split(",") if gen == "persona" or s in ("named", "plain")]:
            with tempfile.TemporaryDirectory() as tmp:
                data_dir = Path(tmp)
                cases = [make_case(gen, seed, style, not args.easy) for seed in args.seeds]
                if args.typed:
                    for case in cases:
                        case.questions = [(typed(q), kind, ev) for q, kind, ev in case.questions]
                        case.never = [(typed(q), kind) for q, kind in case.never]
                for seed, case in zip(args.seeds, cases, strict=True):
                    case.write(data_dir)  # type: ignore[operator]
                    pad(case, data_dir, args.pad, seed)
                yield gen, style, cases, data_dir


def typed(question: str) -> str:
    """``question`` as typed in a hurry: in lower case, without its question mark ("what hobbies does mel have")."""
    return question.lower().rstrip("?").rstrip()


def describe(gen: str, style: str, cases: list[Case], seeds: list[int]) -> str:
    return f"{gen} style={style}: {len(cases)} conversations (seeds {seeds[0]}..{seeds[-1]})"


def main_related(args: argparse.Namespace) -> int:
    summary = []
    for gen, style, cases, data_dir in datasets(args):
        found, stats = evaluate_related(cases, data_dir)
        related_table(found, stats, f"{describe(gen, style, cases, args.seeds)}, at 5")
        at5 = [recall_at(found[n]["all"], 5) for n in ("search", "related", "related+context")]
        summary.append((gen, style, *at5, stats["empty"], stats["related"], stats["search"]))
    print("\nrecall@5: the automatic recall (related) vs the thorough search")
    print(f"{'generator':<9} {'style':<9} {'search':>7} {'related':>8} {'+context':>9} {'empty':>6} "
          f"{'related ms':>11} {'search ms':>10}")  # fmt: skip
    for gen, style, s5, r5, c5, empty, rt, st in summary:
        print(f"{gen:<9} {style:<9} {100 * s5:>6.1f}% {100 * r5:>7.1f}% {100 * c5:>8.1f}% {100 * empty:>5.0f}% "
              f"{rt * 1e3:>11.2f} {st * 1e3:>10.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
