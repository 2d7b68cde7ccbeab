"""Recall quality: how many evidence turns come back in the first 1 / 5 / 10 results.

Generates long two-person conversations with planted, changed and paraphrased facts
(bench/recall_gen.py), writes them as transcripts into a temp DATA_DIR, and asks every question
through the search code path of ``python -m bot search`` (bot.search_cli.search_json), with:

- ``plain BM25``: Okapi BM25 over single turns, words split on non-letters, no stemming or
  stopwords (computed here, the textbook baseline);
- ``index BM25``: our index and terms (stemming, Hangul bigrams, stopwords), single turns only;
- ``recall``: our ranking (neighbouring turns, session, dates, speaker, recency).

recall@k = evidence turns found in the first k results / all evidence turns (a neighbouring turn
that is returned takes a place in the k like any other). Also runs the real CLI once
(``python -m bot search --stdin``) on one conversation and checks it returns the same lines.

    python -m bench.recall_eval [--seeds 1-6] [--style named|plain|both] [--no-cli]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path

from bench.recall_gen import Conversation, generate, write
from bot.search_cli import search_json
from memory.recall import RecallIndex
from memory.recall.rank import Weights

KS = (1, 5, 10)


def plain_bm25(conv: Conversation, question: str, limit: int) -> list[int]:
    """Textbook Okapi BM25 (k1=1.2, b=0.75) over single turns; returns 1-based lines."""
    docs = [re.findall(r"\w+", str(m["content"]).lower()) for m in conv.lines]
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    df: Counter[str] = Counter()
    for d in docs:
        df.update(set(d))
    q = set(re.findall(r"\w+", question.lower()))
    scores = []
    for i, d in enumerate(docs):
        tf = Counter(d)
        s = 0.0
        for t in q:
            if tf[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * tf[t] * 2.2 / (tf[t] + 1.2 * (0.25 + 0.75 * len(d) / avgdl))
        if s > 0:
            scores.append((s, i + 1))
    scores.sort(key=lambda x: (-x[0], x[1]))
    return [line for _, line in scores[:limit]]


def evaluate(convs: list[Conversation], data_dir: Path, methods: dict[str, object]) -> dict[str, dict[str, list[int]]]:
    """found[method][kind] = list of ranks (0 = not in the first 10) per evidence turn."""
    found: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    indexes = {name: RecallIndex(data_dir, weights=w) for name, w in methods.items() if isinstance(w, Weights)}
    try:
        for conv in convs:
            for idx in indexes.values():
                idx.sync(conv.chat)
            for q in conv.questions:
                results: dict[str, list[int]] = {"plain BM25": plain_bm25(conv, q.text, 10)}
                for name, idx in indexes.items():
                    results[name] = [r["line"] for r in search_json(idx, conv.chat, q.text, 10, date(2026, 11, 29))]
                for name, lines in results.items():
                    for ev in q.evidence:
                        rank = lines.index(ev) + 1 if ev in lines else 0
                        found[name][q.kind].append(rank)
                        found[name]["all"].append(rank)
    finally:
        for idx in indexes.values():
            idx.close()
    return found


def recall_at(ranks: list[int], k: int) -> float:
    return sum(1 for r in ranks if 0 < r <= k) / len(ranks) if ranks else 0.0


def table(found: dict[str, dict[str, list[int]]], title: str) -> None:
    names = list(found)
    print(f"\n{title}")
    print(f"{'questions':<10} {'evidence':>8}  " + "  ".join(f"{n:>22}" for n in names))
    print(f"{'':<10} {'':>8}  " + "  ".join(f"{'@1    @5   @10':>22}" for _ in names))
    kinds = ["all"] + sorted(k for k in found[names[0]] if k != "all")
    for kind in kinds:
        cells = []
        for n in names:
            r = found[n][kind]
            cells.append(f"{'  '.join(f'{100 * recall_at(r, k):5.1f}' for k in KS):>22}")
        print(f"{kind:<10} {len(found[names[0]][kind]):>8}  " + "  ".join(cells))
    base = recall_at(found[names[0]]["all"], 10)
    best = recall_at(found[names[-1]]["all"], 10)
    print(f"recall@10: {names[-1]} {100 * best:.1f}% vs {names[0]} {100 * base:.1f}% ({best / base:.2f}x)")


def check_cli(conv: Conversation, data_dir: Path) -> None:
    """Run the real ``python -m bot search --stdin`` and compare with the in-process results."""
    queries = [q.text for q in conv.questions]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "search", "--chat", conv.chat, "--limit", "10", "--stdin",
         "--data-dir", str(data_dir)],
        input="\n".join(queries) + "\n", capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    elapsed = time.perf_counter() - t0
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(out) == len(queries), (len(out), len(queries))
    with RecallIndex(data_dir) as idx:
        for q, got in zip(queries, out, strict=True):
            assert got["query"] == q
            want = [r["line"] for r in search_json(idx, conv.chat, q, 10, None)]
            assert [r["line"] for r in got["results"]] == want, q
    print(
        f"\nCLI: python -m bot search --stdin answered {len(queries)} queries in {elapsed:.2f}s, "
        "the same lines as in-process"
    )


def seeds_arg(text: str) -> list[int]:
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in text.split(",")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=seeds_arg, default=seeds_arg("1-6"))
    parser.add_argument("--style", choices=("named", "plain", "both"), default="both")
    parser.add_argument("--no-cli", action="store_true", help="skip the run through the real CLI")
    args = parser.parse_args(argv)
    methods: dict[str, object] = {"plain BM25": None, "index BM25": Weights.bm25(), "recall": Weights()}
    styles = ("named", "plain") if args.style == "both" else (args.style,)
    for style in styles:
        with tempfile.TemporaryDirectory() as tmp:
            data_dir = Path(tmp)
            convs = [generate(seed, style=style) for seed in args.seeds]
            for conv in convs:
                write(conv, data_dir)
            turns = sum(len(c.lines) for c in convs)
            qs = sum(len(c.questions) for c in convs)
            found = evaluate(convs, data_dir, methods)
            table(found, f"style={style}: {len(convs)} conversations (seeds {args.seeds[0]}..{args.seeds[-1]}), "
                         f"{turns} turns, {qs} questions")  # fmt: skip
            for seed, conv in zip(args.seeds, convs, strict=True):
                one = evaluate([conv], data_dir, methods)
                cells = "  ".join(f"{n} {100 * recall_at(one[n]['all'], 10):.1f}" for n in one)
                print(f"  seed {seed}: recall@10 {cells}")
            if not args.no_cli and style == styles[0]:
                check_cli(convs[0], data_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
