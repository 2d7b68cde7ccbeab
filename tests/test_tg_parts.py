"""How long answers are cut into Telegram messages: as few as Telegram's own counting allows.

Telegram limits a message to 4096 UTF-16 units of the text *after* parsing (tags are free)
and shows at most 100 entities. Every part must pass the fake server's strict parser.
"""

import math

from bot.tg.render import render, render_parts
from tests.fakes.telegram_server import parse_html
from tests.markdown_samples import realistic_answer


def entities(html_text: str) -> int:
    """Entities as Telegram counts them: a <pre><code class> pair is one."""
    found = parse_html(html_text)[1]
    pre = {(s, e) for name, s, e in found if name == "pre"}
    return sum(1 for name, s, e in found if not (name == "code" and (s, e) in pre))


def test_a_long_answer_needs_about_as_many_parts_as_its_visible_text():
    md = realistic_answer(30_000)
    visible = len(parse_html(render(md))[0].encode("utf-16-le")) // 2
    ideal = math.ceil(visible / 4096)
    parts = render_parts(md)
    sizes = [len(parse_html(p.html)[0].encode("utf-16-le")) // 2 for p in parts]
    assert len(parts) <= ideal + 1, (len(parts), ideal, sizes)
    assert all(size <= 4096 for size in sizes)
    assert all(entities(p.html) <= 100 for p in parts)
    assert sum(sizes) >= visible - 2 * len(parts)  # nothing lost but the line breaks at the cuts


def test_a_part_holds_at_most_100_entities():
    md = "\n".join(f"- **{i}** `c{i}`" for i in range(400))  # 800 entities in under 6,000 characters
    parts = render_parts(md)
    assert len(parts) >= 8
    for part in parts:
        assert entities(part.html) <= 100
        parse_html(part.html)
    shown = "\n".join(parse_html(p.html)[0] for p in parts)
    assert shown == parse_html(render(md))[0]


def test_a_long_code_line_with_escapes_is_cut_by_what_telegram_counts():
    md = "```html\n" + "<br>&nbsp;" * 900 + "\n```"  # 9,000 characters, 4 or 5 escaped units each
    parts = render_parts(md)
    assert len(parts) == 3  # 9,000 visible units: not the 22,000 characters of escaped HTML
    for part in parts:
        assert part.html.startswith('<pre><code class="language-html">')
        assert len(parse_html(part.html)[0]) <= 4096
    assert "".join(parse_html(p.html)[0] for p in parts) == "<br>&nbsp;" * 900
