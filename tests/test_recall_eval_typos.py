"""The ``typos`` layout of bench.recall_eval: the ``real`` conversation with typing errors in its words."""

from __future__ import annotations

import re

from bench import recall_real


def _one_edit(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with two neighbouring letters swapped, one letter dropped or one doubled."""
    if len(b) == len(a):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and (a[diff[0]], a[diff[1]]) == (b[diff[1]], b[diff[0]])
    short, long_ = (b, a) if len(b) < len(a) else (a, b)
    return len(long_) == len(short) + 1 and any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def test_typos_change_one_word_in_about_a_third_of_the_messages_and_nothing_else() -> None:
    real = recall_real.generate(3)
    typed = recall_real.generate(3, typos=True)
    assert [(q.text, q.kind, q.evidence) for q in typed.questions] == [
        (q.text, q.kind, q.evidence) for q in real.questions
    ]
    before, after = real.files[None], typed.files[None]
    assert [(m["name"], m["at"]) for m in before] == [(m["name"], m["at"]) for m in after]
    changed = 0
    for a, b in zip(before, after, strict=True):
        if a["content"] == b["content"]:
            continue
        changed += 1
        x, y = re.findall(r"\S+", str(a["content"])), re.findall(r"\S+", str(b["content"]))
        words = [(u, v) for u, v in zip(x, y, strict=True) if u != v]
        assert len(words) == 1 and _one_edit(*words[0]), (a["content"], b["content"])
        assert not str(a["content"]).startswith("[photo]")
    eligible = sum(
        1
        for m in before
        if not str(m["content"]).startswith("[photo]") and recall_real._TYPO_WORD.search(str(m["content"]))
    )
    assert 0.25 * eligible < changed < 0.35 * eligible
