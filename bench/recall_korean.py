# ruff: noqa: E501  (tables of sentences)
"""Korean recall, measured: Hangul bigrams (memory.recall.text) against the morphological analyzer kiwipiepy.

Conversations in Korean (one per seed, about 400 messages): everyday small talk, decoys that reuse
the facts' nouns in other contexts, and planted facts asked about later in other forms:

- ``particle``: other particles and endings (``자물쇠 번호는`` / ``자물쇠의 번호를``);
- ``honorific``: said plainly, asked politely or the other way round (``예약했어`` / ``예약하셨어요``);
- ``spacing``: written together or apart (``아이스아메리카노`` / ``아이스 아메리카노``);
- ``unit``: numbers with units (``15만원``, ``3층``, ``2시 반``, ``500ml``);
- ``mixed``: Korean with English words (``Kyoto 출장``, ``PT 자료``, ``Slack 채널``).

Both ways index the same transcripts through the real RecallIndex and rank (the analyzer's terms
replace ``doc_terms`` / ``query_terms`` for the kiwipiepy run: content morphemes — nouns, verb and
adjective stems, roots, numbers, foreign words — Latin words as before). It prints recall@1/5/10
by kind, the index size, the time to make one message's terms and a search's median time.
Tune on seeds 1-6, report 7-12.

    python -m bench.recall_korean [--seeds 7-12] [--only bigram]

kiwipiepy is not a dependency of the bot: ``pip install kiwipiepy kiwipiepy-model`` to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from memory.recall import RecallIndex
from memory.recall import lines as lines_module
from memory.recall import meaning as meanings
from memory.recall import query as query_module
from memory.recall import text as text_module
from memory.recall.text import KOREAN_STOPWORDS, QUERY_STOPWORDS, Term

# (kind, fact as said, the question asked later, slots, near misses: other turns on the same things)
FACTS: list[tuple[str, str, str, dict[str, list[str]], list[str]]] = [
    ("particle", "내 자물쇠 번호는 {n}이야. 잊어버릴까 봐 적어 둬.", "자물쇠의 번호를 다시 알려 줄래?",
     {"n": ["4719", "3082", "5561", "1290"]},
     ["자전거 자물쇠가 녹슬어서 새로 사야겠어.", "사물함 번호가 바뀌었다던데 아직 몰라.", "번호표 뽑고 한참 기다렸어."]),
    ("particle", "동생이 다음 달에 {city}으로 이사 간대.", "동생은 어디로 이사를 간다고 했지?",
     {"city": ["부산", "대전", "광주", "춘천"]},
     ["언니는 작년에 이사했는데 아직 짐을 다 못 풀었대.", "이사 업체 견적이 너무 비싸.", "동생이 요즘 연락이 없네."]),
    ("particle", "우리 팀 회식 장소는 {place}로 정했어.", "팀 회식을 어디에서 하기로 했더라?",
     {"place": ["강남역 고깃집", "을지로 호프집", "홍대 이자카야"]},
     ["회식 날짜는 아직 안 정해졌어.", "다른 팀은 회식을 점심으로 한대.", "회식 때 노래방은 빼자."]),
    ("particle", "조카 생일 선물로 {gift}를 샀어.", "조카에게 줄 생일 선물이 뭐였지?",
     {"gift": ["레고 세트", "블루투스 스피커", "그림책 전집"]},
     ["친구 생일 선물 고르기 너무 어려워.", "조카가 벌써 초등학생이야.", "생일 케이크는 초코로 주문할까?"]),
    ("honorific", "어머니께서 {day}에 정기 검진을 받으신대요.", "엄마 정기 검진 받는 날이 언제라고 했어?",
     {"day": ["목요일", "다음 주 화요일", "15일"]},
     ["아버지는 검진 결과가 괜찮으시대.", "나도 건강 검진 예약해야 하는데.", "어머니가 반찬을 보내 주셨어요."]),
    ("honorific", "치과 예약은 {day} 오후로 했어.", "치과 예약하신 게 언제였죠?",
     {"day": ["금요일", "수요일", "월요일"]},
     ["치과 가기 진짜 싫다.", "미용실 예약은 토요일 오전이야.", "예약 문자가 안 와서 전화했어."]),
    ("honorific", "부장님께서 보고서를 {day}까지 제출하라고 하셨습니다.", "보고서 제출하라는 날이 언제였어?",
     {"day": ["금요일", "이번 주 목요일", "월말"]},
     ["부장님이 오늘 기분이 좋으시네.", "보고서 양식이 또 바뀌었대.", "제출 서류 중에 빠진 게 있대."]),
    ("honorific", "할머니 댁에는 {when}에 찾아뵙기로 했어요.", "할머니 댁 언제 가기로 했지?",
     {"when": ["설날 연휴", "추석 전날", "다음 주말"]},
     ["할머니가 김치를 보내 주셨어.", "할아버지 댁은 시골이라 멀어.", "이번 주말에는 집에 있을 거야."]),
    ("spacing", "카페에서 아이스아메리카노 {n}잔 주문했어.", "아이스 아메리카노 몇 잔 시켰더라?",
     {"n": ["두", "세", "네"]},
     ["카페라테가 더 맛있더라.", "아메리카노 값이 또 올랐어.", "카페에서 케이크 한 조각 먹었어."]),
    ("spacing", "회의실예약은 {n}층 큰 방으로 해 뒀어.", "회의실 예약 어디로 했어?",
     {"n": ["3", "5", "7"]},
     ["회의실 프로젝터가 고장 났대.", "회의가 또 미뤄졌어.", "식당 예약은 결국 취소했어."]),
    ("spacing", "주말에 한강 공원에서 자전거 타기로 했어.", "한강공원 자전거 언제 타기로 했지?", {},
     ["자전거 바퀴에 바람이 빠졌어.", "한강에 사람이 엄청 많더라.", "공원 산책하기 좋은 날씨야."]),
    ("spacing", "새로 산 무선 청소기가 생각보다 시끄러워.", "무선청소기 어떻다고 했지?", {},
     ["청소를 미뤄 뒀더니 할 게 많아.", "무선 이어폰을 또 잃어버렸어.", "청소기 필터를 갈아야 해."]),
    ("unit", "이번 달 월세가 {n}만원으로 올랐어.", "월세가 얼마로 올랐다고 했지?",
     {"n": ["65", "72", "80", "55"]},
     ["관리비가 12만원이나 나왔어.", "물가가 너무 올랐어.", "전세로 옮길까 고민이야."]),
    ("unit", "택배 무게가 {n}kg 나와서 배송비가 더 들었어.", "택배 무게가 몇 kg였지?",
     {"n": ["12", "7.5", "20"]},
     ["택배가 아직 안 왔어.", "배송비 무료 쿠폰이 있었는데.", "쌀 10kg 샀어."]),
    ("unit", "약은 하루에 {n}번, 식후 30분에 먹으래.", "약을 하루 몇 번 먹으라고 했지?",
     {"n": ["두", "세", "한"]},
     ["약국이 일찍 문을 닫았더라.", "비타민은 아침에 한 알 먹어.", "감기약 먹으니까 졸려."]),
    ("unit", "물은 하루 {n}ml씩 마시려고 해.", "하루에 물 몇 ml 마신다고 했더라?",
     {"n": ["1500", "2000", "1800"]},
     ["물병을 회사에 두고 왔어.", "우유 500ml 하나 사 왔어.", "하루 종일 커피만 마셨어."]),
    ("mixed", "다음 주에 Kyoto로 출장 가. 호텔은 역 앞이야.", "Kyoto 출장 호텔이 어디라고 했지?", {},
     ["출장 가방을 아직 못 쌌어.", "Osaka 여행은 내년에 가자.", "호텔 조식이 괜찮았어."]),
    ("mixed", "내일 발표할 PT 자료 아직 반밖에 못 만들었어.", "PT 자료 얼마나 만들었다고 했어?", {},
     ["발표 연습을 좀 더 해야겠어.", "자료 조사가 끝이 없네.", "PT 끝나고 회식한대."]),
    ("mixed", "프로젝트 공지는 Slack {ch} 채널에 올린대.", "프로젝트 공지 올라오는 Slack 채널이 뭐였지?",
     {"ch": ["#general", "#dev-notice", "#team-a"]},
     ["Slack 알림을 꺼 뒀어.", "공지 메일 확인했어?", "프로젝트 마감이 다음 달이야."]),
    ("mixed", "새 노트북은 MacBook Air로 샀어. 색은 {color}이야.", "MacBook 무슨 색으로 샀어?",
     {"color": ["실버", "미드나이트", "스타라이트"]},
     ["노트북 배터리가 빨리 닳아.", "iPad 케이스 색이 예뻐.", "새 휴대폰 색은 블랙으로 했어."]),
]  # fmt: skip

DECOYS = [
    "식당 예약은 결국 취소했어.", "전화번호가 바뀌어서 다시 저장했어.", "회의가 길어져서 점심을 못 먹었어.",
    "카페가 너무 붐벼서 그냥 나왔어.", "동생이랑 통화했는데 별일 없대.", "보고서 양식이 또 바뀌었대.",
    "자전거 바퀴에 바람이 빠졌어.", "택배가 아직 안 왔어.", "월요일은 늘 피곤해.", "약국이 일찍 문을 닫았더라.",
    "할머니가 김치를 보내 주셨어.", "호텔 조식이 괜찮았어.", "노트북 배터리가 빨리 닳아.", "물가가 너무 올랐어.",
    "발표 연습을 좀 더 해야겠어.", "공지 메일 확인했어?", "청소를 미뤄 뒀더니 할 게 많아.", "선물 포장이 예뻤어.",
    "출장 가방을 아직 못 쌌어.", "생일 파티 사진 보내 줄게.", "한강에 사람이 엄청 많더라.", "채널 알림을 꺼 뒀어.",
]  # fmt: skip

SMALL = [
    "오늘 날씨 진짜 좋다.", "점심 뭐 먹었어?", "나는 김치찌개 먹었어.", "요즘 너무 바빠.", "주말에 뭐 할 거야?",
    "그냥 집에서 쉬려고.", "영화 한 편 볼까 해.", "어제 잠을 잘 못 잤어.", "커피 한 잔 하고 싶다.", "퇴근하고 싶다.",
    "운동 좀 해야 하는데.", "비가 온다던데 우산 챙겨.", "ㅋㅋㅋ 그러게.", "맞아, 나도 그렇게 생각해.",
    "오늘 좀 춥네요.",
    "저녁에 통화할 수 있어요?", "네, 알겠습니다.", "수고하셨습니다!", "좋은 하루 보내세요.", "다음에 또 얘기해.",
    "요즘 읽는 책이 재미있어.", "고양이가 자꾸 키보드 위에 올라와.", "버스를 놓쳐서 지각했어.", "배고프다.",
]  # fmt: skip

REPLIES = ["알겠어, 기억해 둘게.", "네, 적어 둘게요.", "오 그렇구나!", "좋네. 잊지 말자.", "응, 기억할게."]


# questions about what none of the conversations ever said (the relevance floor): each should find nothing
OFF_TOPIC = [
    "내가 얼룩말 어디서 봤다고 했지?", "얼룩말", "내가 좋아하는 칵테일이 뭐였지?", "우리 집 와이파이 비밀번호 뭐였어?",
    "응원하는 축구팀이 어디였지?", "지붕 새는 거 언제 고쳤어?", "초밥집 이름이 뭐였지?", "기타 레슨 몇 시였지?",
    "동생 결혼식이 언제였지?", "내 차 번호판이 뭐야?", "스키장 어디로 갔었지?", "고양이 이름이 뭐였지?",
]  # fmt: skip


@dataclass
class Conv:
    chat: str
    lines: list[dict[str, object]]
    questions: list[tuple[str, str, int]]  # (question, kind, evidence line)


def generate(seed: int, messages: int = 400) -> Conv:
    rnd = random.Random(seed * 31337 + 5)
    facts = rnd.sample(FACTS, k=14)
    slots = sorted(rnd.sample(range(2, messages // 2 - 10), k=len(facts)))
    lines: list[dict[str, object]] = []
    questions: list[tuple[str, str, int]] = []
    when = datetime(2025, 1, 6, 9, 0) + timedelta(days=rnd.randrange(200))
    fact_at = dict(zip(slots, facts, strict=True))
    near = [x for f in facts for x in f[4]]
    for i in range(messages // 2):
        if i % 12 == 0:
            when += timedelta(days=rnd.randint(1, 6), hours=rnd.randint(-3, 3))
        at = when.isoformat(timespec="seconds") + "+09:00"
        if i in fact_at:
            kind, said, asked, values, _ = fact_at[i]
            filled = {k: rnd.choice(v) for k, v in values.items()}
            lines.append({"role": "user", "content": said.format(**filled), "at": at})
            lines.append({"role": "assistant", "content": rnd.choice(REPLIES), "at": at})
            questions.append((asked, kind, len(lines) - 1))
        else:
            x = rnd.random()
            pool = near if x < 0.3 else DECOYS if x < 0.45 else SMALL
            lines.append({"role": "user", "content": rnd.choice(pool), "at": at})
            lines.append({"role": "assistant", "content": rnd.choice(SMALL + REPLIES), "at": at})
    return Conv(f"ko{seed}", lines, questions)


def write(conv: Conv, data_dir: Path) -> None:
    path = data_dir / "chats" / f"{conv.chat}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for m in conv.lines:
            f.write(json.dumps(m, ensure_ascii=False) + "\n")


# -- the analyzer's terms ---------------------------------------------------------------
KEEP = ("NNG", "NNP", "NR", "SN", "SL", "SH", "VV", "VA", "XR", "NNB")


def kiwi_terms() -> tuple[Callable[[str], list[str]], Callable[[str], list[Term]], float]:
    """(doc_terms, query_terms, seconds to load the model) made with kiwipiepy."""
    t0 = time.perf_counter()
    from kiwipiepy import Kiwi  # type: ignore[import-not-found]

    kiwi = Kiwi()
    loaded = time.perf_counter() - t0
    word_term = text_module.word_term

    def morphemes(text: str) -> list[str]:
        out: list[str] = []
        for tok in kiwi.tokenize(text):
            tag = tok.tag.split("-")[0]
            if tag not in KEEP:
                continue
            if tag == "SL":
                term = word_term(tok.form)
                if term:
                    out.append(term)
            elif tag == "NNB" and not out:
                continue
            else:
                out.append(tok.form.casefold())
        return out

    def doc(text: str) -> list[str]:
        return morphemes(text)

    def query(text: str) -> list[Term]:
        seen: dict[str, None] = {}
        for term in morphemes(text):
            if term in KOREAN_STOPWORDS or term in QUERY_STOPWORDS or term in ("하", "있", "되", "이"):
                continue
            seen.setdefault(term)
        return [Term(t) for t in seen]

    return doc, query, loaded


@contextmanager
def analyzer(doc: Callable[[str], list[str]], query: Callable[[str], list[Term]]) -> Iterator[None]:
    old = lines_module.doc_terms, query_module.query_terms
    lines_module.doc_terms, query_module.query_terms = doc, query  # type: ignore[assignment]
    try:
        yield
    finally:
        lines_module.doc_terms, query_module.query_terms = old  # type: ignore[assignment]


def measure(convs: list[Conv], name: str, embedder: meanings.Embedder | None = None) -> dict[str, object]:
    ranks: dict[str, list[int]] = defaultdict(list)
    times: list[float] = []
    silent = 0  # OFF_TOPIC questions that found nothing
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        for c in convs:
            write(c, data)
        t0 = time.perf_counter()
        with RecallIndex(data, sync_budget=None, meaning=embedder) as idx:
            for c in convs:
                idx.sync(c.chat)
                idx.embed(c.chat)
            built = time.perf_counter() - t0
            for c in convs:
                for q, kind, line in c.questions:
                    t1 = time.perf_counter()
                    hits = idx.search(c.chat, q, 10, today=date(2025, 12, 1), sync=False)
                    times.append(time.perf_counter() - t1)
                    got = [h.line for h in hits]
                    r = got.index(line) + 1 if line in got else 0
                    ranks[kind].append(r)
                    ranks["all"].append(r)
                silent += sum(not idx.search(c.chat, q, 10, today=date(2025, 12, 1), sync=False) for q in OFF_TOPIC)
        size = sum(p.stat().st_size for p in data.glob("recall.sqlite3*"))
    messages = sum(len(c.lines) for c in convs)
    return {"name": name, "ranks": ranks, "size": size, "per_msg": built / messages, "query": statistics.median(times),
            "silent": silent / (len(OFF_TOPIC) * len(convs))}  # fmt: skip


def recall_at(r: list[int], k: int) -> float:
    return sum(1 for x in r if 0 < x <= k) / len(r) if r else 0.0


def seeds_arg(text: str) -> list[int]:
    a, _, b = text.partition("-")
    return list(range(int(a), int(b or a) + 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=seeds_arg, default=seeds_arg("7-12"))
    parser.add_argument("--only", choices=("bigram", "kiwi"))
    parser.add_argument("--meaning", action="store_true", help="also bigrams with recall by meaning")
    args = parser.parse_args(argv)
    convs = [generate(s) for s in args.seeds]
    results = []
    if args.only != "kiwi":
        results.append(measure(convs, "bigram"))
        embedder = meanings.load(True, threads=os.cpu_count() or 1) if args.meaning else None
        if embedder is not None:
            results.append(measure(convs, "bigram+meaning", embedder))
    if args.only != "bigram":
        try:
            doc, query, loaded = kiwi_terms()
        except ImportError:
            print("kiwipiepy is not installed: pip install kiwipiepy kiwipiepy-model (bigrams only)")
        else:
            print(f"kiwipiepy loaded in {loaded:.1f} s")
            with analyzer(doc, query):
                results.append(measure(convs, "kiwi"))
    n = sum(len(c.questions) for c in convs)
    print(f"\nKorean recall, seeds {args.seeds[0]}-{args.seeds[-1]}: {len(convs)} conversations, {n} questions")
    kinds = ["all", *sorted(k for k in results[0]["ranks"] if k != "all")]  # type: ignore[union-attr]
    print(f"{'kind':<10} {'n':>4}  " + "  ".join(f"{str(r['name']):>17}" for r in results))
    print(f"{'':<10} {'':>4}  " + "  ".join(f"{'@1    @5   @10':>17}" for _ in results))
    for kind in kinds:
        cells = []
        for r in results:
            rk = r["ranks"][kind]  # type: ignore[index]
            cells.append(f"{'  '.join(f'{100 * recall_at(rk, k):4.0f}' for k in (1, 5, 10)):>17}")
        count = len(results[0]["ranks"][kind])  # type: ignore[index]
        print(f"{kind:<10} {count:>4}  " + "  ".join(cells))
    off = len(OFF_TOPIC) * len(convs)
    print(f"{'off-topic':<10} {off:>4}  " + "  ".join(f"{100 * float(r['silent']):>12.0f}% nothing" for r in results))  # type: ignore[arg-type]
    for r in results:
        per_msg, size, query = float(r["per_msg"]), int(r["size"]), float(r["query"])  # type: ignore[arg-type]
        print(
            f"{r['name']}: index {size / 1e6:.2f} MB, indexing {per_msg * 1e6:.0f} µs per message "
            f"(a million: {per_msg * 1e6 / 60:.1f} min), search median {query * 1e3:.2f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
