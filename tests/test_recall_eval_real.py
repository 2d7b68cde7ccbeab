"""The ``real`` layout of bench.recall_eval (bench.recall_real): its untidiness falls on the answers and on the
other messages alike, so that no ranking can learn which messages are the answers from how they are written."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from bench import recall_real

# an aside: an opener, then the start of one of the layout's sentences about something else
_OPENERS = ["Also", "Btw", "Oh and", "Side note,", "Anyway", "Ugh and", "Random but", "Unrelated, but"]
_ASIDE = re.compile(
    rf"(?:{'|'.join(map(re.escape, _OPENERS))}) "
    r"(?:my .+?|did you watch .+?|the new .+?|I still haven't .+?|the weather is .+?)[.?]"
)


@pytest.mark.parametrize("seed", [1, 7])
def test_messages_mixing_topics_are_the_answers_as_often_as_the_other_messages(seed: int) -> None:
    conv = recall_real.generate(seed)
    lines = [str(m["content"]) for m in conv.files[None]]
    evidence = {line for q in conv.questions for f, line in q.evidence if f is None}
    answers = [bool(_ASIDE.search(lines[n - 1])) for n in evidence]
    others = [
        bool(_ASIDE.search(text)) for n, text in enumerate(lines, 1) if n not in evidence and len(text.split()) >= 5
    ]
    share_answers, share_others = sum(answers) / len(answers), sum(others) / len(others)
    assert 0.15 < share_answers < 0.4 and 0.15 < share_others < 0.4
    assert abs(share_answers - share_others) < 0.1


def test_the_asides_are_seldom_said_twice() -> None:
    """Six sentences repeated through a chat made their rare words a link between the messages holding them."""
    said = Counter(
        m.group(0) for line in recall_real.generate(1).files[None] for m in _ASIDE.finditer(str(line["content"]))
    )
    assert sum(said.values()) > 150
    assert len(said) > 0.8 * sum(said.values())
