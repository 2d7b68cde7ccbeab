"""Realistic long Markdown answers for the splitting tests and bench.split_efficiency."""

import random

from bot.tg.render import render
from bot.tg.split import visible_len

WORDS_KO = "배포 설정 서버 로그 사용자 요청 응답 캐시 메모리 파일 기록 요약 모델 토큰 시간 오류 재시도 연결".split()
WORDS_EN = "deploy config server log user request reply cache memory file record summary model token".split()


def sentence(rng: random.Random) -> str:
    words = []
    for _ in range(rng.randint(6, 14)):
        w = rng.choice(WORDS_KO if rng.random() < 0.6 else WORDS_EN)
        roll = rng.random()
        if roll < 0.08:
            w = f"**{w}**"
        elif roll < 0.14:
            w = f"`{w}_{rng.randint(1, 99)}`"
        elif roll < 0.16:
            w = f"[{w}](https://example.com/{w})"
        words.append(w)
    return " ".join(words) + "."


def realistic_answer(visible_target: int, seed: int = 1) -> str:
    """A long mixed answer: headings, paragraphs, bold-labelled lists, code blocks, a quote."""
    rng = random.Random(seed)
    blocks: list[str] = []
    visible = 0  # visible size of the blocks so far (each block is rendered once)
    section = 0
    while visible < visible_target:
        section += 1
        new = [f"## {section}. {rng.choice(WORDS_KO)} {rng.choice(WORDS_EN)}"]
        new.append(" ".join(sentence(rng) for _ in range(rng.randint(2, 5))))
        kind = section % 3
        if kind == 0:
            new.append("\n".join(f"- **{rng.choice(WORDS_KO)}**: {sentence(rng)}" for _ in range(rng.randint(3, 7))))
        elif kind == 1:
            code = "\n".join(f"    value_{i} = compute({i}, cache=True)  # {rng.choice(WORDS_EN)}" for i in range(12))
            new.append(f"```python\ndef step_{section}():\n{code}\n```")
        else:
            new.append("\n".join(f"{i}. {sentence(rng)}" for i in range(1, rng.randint(3, 6))))
            new.append(f"> {sentence(rng)}")
        blocks += new
        visible += sum(visible_len(render(b)) + 2 for b in new)
    return "\n\n".join(blocks)
