"""Markdown → Telegram HTML, and splitting that HTML into balanced message-sized parts.

Every HTML result is checked with the fake Telegram server's strict parser: the same
check that answers "can't parse entities" in the end-to-end tests.
"""

import random
import re

import pytest

from bot.tg.render import RULE_LINE, html_to_text, render, render_inline, render_parts, split_html
from bot.tg.split import utf16_len, visible_len
from tests.fakes.telegram_server import EntityError, parse_html


def visible(html_text: str) -> str:
    return parse_html(html_text)[0]


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("**bold** and __also this__", "<b>bold</b> and <b>also this</b>"),
        ("*it* and _it_", "<i>it</i> and <i>it</i>"),
        ("***both***", "<b><i>both</i></b>"),
        ("~~gone~~ ||secret||", "<s>gone</s> <tg-spoiler>secret</tg-spoiler>"),
        ("`a < b && c`", "<code>a &lt; b &amp;&amp; c</code>"),
        ("``has ` tick``", "<code>has ` tick</code>"),
        ("[docs](https://ex.com/a?b=1&c=2)", '<a href="https://ex.com/a?b=1&amp;c=2">docs</a>'),
        ("[**bold** link](https://ex.com)", '<a href="https://ex.com"><b>bold</b> link</a>'),
        ("<https://ex.com>", '<a href="https://ex.com">https://ex.com</a>'),
        ("**bold with *italic* inside**", "<b>bold with <i>italic</i> inside</b>"),
        ("<div> & </div>", "&lt;div&gt; &amp; &lt;/div&gt;"),
        (r"\*not italic\*", "*not italic*"),
    ],
)
def test_inline_markup(markdown, expected):
    assert render_inline(markdown) == expected
    visible(expected)


@pytest.mark.parametrize(
    "markdown",
    [
        "**bold without end",
        "an *unclosed italic",
        "`unclosed code",
        "snake_case_name and file_name.py",
        "2 * 3 * 4 = 24",
        "a ** b ** c",
        "[label](relative/path)",
        "[label](https://unclosed",
        "~single~ tilde",
        "__init__ is fine",
    ],
)
def test_unbalanced_or_non_markup_is_literal_text(markdown):
    out = render_inline(markdown)
    assert visible(out) == markdown.replace("\\", "")
    assert "<" not in out.replace("&lt;", "")  # no tag at all


def test_blocks():
    md = "\n".join(
        [
            "# Title with **bold**",
            "Intro line",
            "- first *item*",
            "  - nested",
            "* star bullet",
            "1. one",
            "2) two",
            "- [ ] todo",
            "- [x] done",
            "---",
            "> quoted **text**",
            "> second line",
            "",
            "```python",
            "if a < b:",
            "    print('x')",
            "```",
            "tail",
        ]
    )
    out = render(md)
    assert out.split("\n") == [
        "<b>Title with bold</b>",
        "Intro line",
        "• first <i>item</i>",
        "  • nested",
        "• star bullet",
        "1. one",
        "2. two",
        "☐ todo",
        "☑ done",
        RULE_LINE,
        "<blockquote>quoted <b>text</b>",
        "second line</blockquote>",
        "",
        '<pre><code class="language-python">if a &lt; b:',
        "    print('x')</code></pre>",
        "tail",
    ]
    visible(out)


def test_code_block_without_language_and_unclosed_fence():
    assert render("```\n<x>\n```") == "<pre>&lt;x&gt;</pre>"
    # an answer cut off inside a code block still renders (as code) and stays valid
    out = render("text\n```js\nlet a = 1 && 2;")
    assert out == 'text\n<pre><code class="language-js">let a = 1 &amp;&amp; 2;</code></pre>'
    assert render('```evil"><b>\nx\n```') == '<pre><code class="language-evilb">x</code></pre>'


def test_markup_inside_code_is_not_parsed():
    assert render("```\n**not bold** _x_\n```") == "<pre>**not bold** _x_</pre>"
    assert render_inline("`**x**`") == "<code>**x**</code>"


def test_table_becomes_aligned_monospace():
    out = render("| 이름 | 값 |\n|---|---:|\n| **a** | 1 |\n| bb | 22 |")
    assert out.startswith("<pre>") and out.endswith("</pre>")
    lines = visible(out).split("\n")
    assert lines[0] == "이름 | 값"
    assert lines[2] == "a    | 1" and lines[3] == "bb   | 22"


def test_blank_lines_are_kept_once():
    assert render("a\n\n\n\nb\n\n") == "a\n\nb"


FUZZ_ALPHABET = list("ab1 \n*_~|`[]()<>&\\#->.:") + ["**", "```", "http://x", "\n\n", "> ", "- ", "1. "]
FUZZ_ALPHABET += ["***", "\n    ```", "\n> ```", "[a][r]", "[r]", "\n[r]: http://x\n", "\\\n", "| a |\n|---|\n"]


def fuzz_inputs(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(FUZZ_ALPHABET) for _ in range(rng.randint(1, 60))) for _ in range(n)]


def test_any_input_renders_to_html_telegram_accepts():
    for md in fuzz_inputs(3000):
        out = render(md)
        try:
            parse_html(out)
        except EntityError as e:  # pragma: no cover - the message is the point
            pytest.fail(f"invalid HTML for {md!r}: {out!r}: {e}")


def test_no_text_is_lost_outside_markup():
    # letters and digits never disappear (fences without a language and no links here)
    for md in fuzz_inputs(2000, seed=11):
        md = re.sub("`{3,}", "``", md.replace("http://x", "x"))
        shown = visible(render(md))
        for ch in "ab":
            assert shown.count(ch) == md.count(ch), (md, shown)


# -- splitting -----------------------------------------------------------------------------


def test_split_html_closes_and_reopens_tags():
    html_text = "<b>bold <i>" + "word " * 40 + "</i> end</b>"
    parts = split_html(html_text, 60)
    assert len(parts) > 3
    for p in parts:
        assert visible_len(p) <= 60  # Telegram counts the text after parsing: tags are free
        visible(p)  # balanced in every part
        assert p.startswith("<b>")
    assert parts[1].startswith("<b><i>")
    joined = " ".join(visible(p) for p in parts)
    assert joined.split() == visible(html_text).split()


def test_split_html_reopens_code_block_with_language():
    code = "\n".join(f"line_{i} = {i} < {i + 1}" for i in range(60))
    html_text = render(f"```python\n{code}\n```")
    parts = split_html(html_text, 300)
    assert len(parts) > 2
    for p in parts:
        assert p.startswith('<pre><code class="language-python">') and p.endswith("</code></pre>")
        assert visible_len(p) <= 300
    assert "\n".join(visible(p) for p in parts) == code  # cut on line breaks only


def test_split_html_never_cuts_an_entity_or_an_emoji():
    html_text = "&amp;😀" * 500
    parts = split_html(html_text, 101)
    assert all(visible_len(p) <= 101 for p in parts)
    assert [visible_len(p) for p in parts[:2]] == [100, 101]  # "&amp;" is one unit, the emoji two
    assert "".join(visible(p) for p in parts) == "&😀" * 500


def test_split_html_fuzz_parts_are_valid_and_complete():
    rng = random.Random(3)
    for md in fuzz_inputs(300, seed=5):
        out = render(md * 5)
        limit = rng.randint(60, 200)
        parts = split_html(out, limit)
        for p in parts:
            assert visible_len(p) <= limit, (md, p)
            visible(p)
        assert "".join("".join(visible(p).split()) for p in parts) == "".join(visible(out).split())


def test_render_parts_cut_on_paragraphs_and_keep_the_source():
    paragraphs = [f"**Part {i}**: " + "가나다 " * 300 for i in range(12)]
    md = "\n\n".join(paragraphs)
    parts = render_parts(md)
    assert len(parts) >= 3
    for part in parts:
        assert utf16_len(part.html) <= 4096
        assert part.html.startswith("<b>Part ")  # every part starts at a paragraph
        visible(part.html)
    # the plain fallback of each part is its Markdown source, and together they are the whole answer
    assert "\n\n".join(p.plain for p in parts) == md


def test_render_parts_count_utf16_units():
    md = "😀" * 5000  # 10,000 UTF-16 units in one "paragraph"
    parts = render_parts(md)
    assert [utf16_len(p.html) for p in parts] == [4000, 4000, 2000]  # 4096 less a small margin
    assert "".join(p.html for p in parts) == md


def test_render_parts_long_code_block_is_closed_and_reopened():
    code = "\n".join(f"print({i})  # {'x' * 40}" for i in range(200))
    md = f"Intro paragraph.\n\n```python\n{code}\n```\n\nOutro."
    parts = render_parts(md)
    assert len(parts) >= 3
    for part in parts:
        assert utf16_len(part.html) <= 4096
        visible(part.html)
    code_parts = [p for p in parts if '<pre><code class="language-python">' in p.html]
    assert len(code_parts) >= 2
    shown = "\n".join(visible(p.html) for p in parts)
    assert shown.split() == f"Intro paragraph.\n{code}\nOutro.".split()


def test_render_parts_empty_and_whitespace():
    assert render_parts("") == []
    assert render_parts("\n\n  \n") == []
    assert html_to_text(render("a &amp; <b>")) == "a &amp; <b>"


def test_split_html_counts_only_what_telegram_shows():
    html_text = "<b>ab</b> <code>c&amp;</code> " * 300  # 1,800 visible units in 9,000 characters
    parts = split_html(html_text, 300)
    assert len(parts) == 6  # 1800 / 300: tags and escapes cost nothing
    assert all(visible_len(p) <= 300 for p in parts)
    assert " ".join(visible(p) for p in parts).split() == visible(html_text).split()


def test_split_html_keeps_at_most_max_entities_per_part():
    html_text = "<b>x</b> " * 250
    parts = split_html(html_text, 4000, max_entities=100)
    assert [p.count("<b>") for p in parts] == [100, 100, 50]


@pytest.mark.parametrize(
    ("md", "expected"),
    [
        ("**a `x` b**", "<b>a </b><code>x</code><b> b</b>"),
        ("*`x`*", "<code>x</code>"),
        ("**a _b `x` c_ d**", "<b>a <i>b </i></b><code>x</code><b><i> c</i> d</b>"),
        ("# Title `x`", "<b>Title </b><code>x</code>"),
        ("~~a `x`~~", "<s>a x</s>"),  # struck text stays struck: the code loses its style
        ("||secret `x`||", "<tg-spoiler>secret x</tg-spoiler>"),  # a hidden word stays hidden
        ("[`x` y](https://e.com)", '<a href="https://e.com">x y</a>'),
        ("**||a `x`||**", "<b><tg-spoiler>a x</tg-spoiler></b>"),
        ("> **q `c`**", "<blockquote><b>q </b><code>c</code></blockquote>"),
    ],
)
def test_code_is_never_inside_another_entity(md: str, expected: str):
    out = render(md)
    assert out == expected
    parse_html(out)  # the fake's parser refuses code inside b, i, u, s, spoilers and links, as Telegram does
