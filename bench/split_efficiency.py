"""How many Telegram messages long answers need: counting visible text (as Telegram does) vs counting HTML.

For realistic long answers (headings, bold-labelled lists, inline code, links, code blocks)
it prints the visible size, the ideal number of messages ceil(visible / 4096), the parts
``render_parts`` makes, and a baseline: the same rendered lines packed by the length of
their HTML (tags and escapes counted, the old rule). Fails if ``render_parts`` needs more
than ideal + 1 messages for any answer.

    python -m bench.split_efficiency [--answers 5] [--size 30000]
"""

from __future__ import annotations

import argparse
import math
import sys

from bot.tg.render import render, render_parts
from bot.tg.split import TELEGRAM_LIMIT, utf16_len, visible_len
from tests.markdown_samples import realistic_answer


def html_counted_parts(markdown: str, limit: int = TELEGRAM_LIMIT) -> int:
    """Messages needed when every rendered line counts with its tags and escapes (greedy, whole lines)."""
    parts, size = 0, -1
    for line in render(markdown).split("\n"):
        n = utf16_len(line) + 1
        if size < 0 or size + n > limit:
            parts, size = parts + 1, n - 1
        else:
            size += n
    return parts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", type=int, default=5)
    parser.add_argument("--size", type=int, default=30_000, help="visible characters per answer")
    args = parser.parse_args()
    head = ("answer", "visible", "ideal", "html-counted", "visible-counted", "per part", "ratio")
    print("{:>6} {:>8} {:>6} {:>13} {:>16} {:>9} {:>6}".format(*head))
    worst = 0
    totals = [0, 0]
    for seed in range(1, args.answers + 1):
        md = realistic_answer(args.size, seed)
        visible = visible_len(render(md))
        ideal = math.ceil(visible / TELEGRAM_LIMIT)
        before = html_counted_parts(md)
        parts = render_parts(md)
        after = len(parts)
        per_part = sum(visible_len(p.html) for p in parts) / after
        totals[0] += before
        totals[1] += after
        worst = max(worst, after - ideal)
        print(f"{seed:>6} {visible:>8,} {ideal:>6} {before:>13} {after:>16} {per_part:>9,.0f} {after / before:>6.2f}")
    print(f"total: {totals[1]} messages instead of {totals[0]} ({totals[1] / totals[0]:.2f}x)")
    if worst > 1:
        print(f"FAIL: an answer needed {worst} more messages than ideal", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
