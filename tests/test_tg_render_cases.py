"""Regression corpus: Markdown the renderer once got wrong, with the exact Telegram HTML expected.

The cases come from running ``bot/tg/render.py`` on CommonMark's spec examples and on real
Korean/English answers. Each expected HTML is also checked with the fake Telegram server's
strict parser, so a case documents both what the user sees and that Telegram accepts it.
"""

import pytest

from bot.tg.render import render
from tests.fakes.telegram_server import parse_html

CASES: list[tuple[str, str, str]] = [
    # -- code fences inside list items and quotes ---------------------------------------
    (
        "fence indented 4 spaces in a list item (its YAML lines stay code, not bullets)",
        "1. Install the chart:\n    ```yaml\n    replicaCount: 2\n    image:\n      - name: web\n    ```\n2. Deploy",
        '1. Install the chart:\n<pre><code class="language-yaml">replicaCount: 2\nimage:\n  - name: web</code></pre>'
        "\n2. Deploy",
    ),
    (
        "fence indented 2 spaces after a bullet: the indentation is not part of the code",
        "- item\n\n  ```bash\n  ls -la\n  ```",
        '• item\n\n<pre><code class="language-bash">ls -la</code></pre>',
    ),
    (
        "a code line less indented than its fence keeps what it has",
        "1. a\n    ```\n    x = 1\n  y = 2\n    ```",
        "1. a\n<pre>x = 1\ny = 2</pre>",
    ),
    (
        "fence inside a quote",
        "> ```python\n> print('hi')\n> ```",
        "<blockquote><pre><code class=\"language-python\">print('hi')</code></pre></blockquote>",
    ),
    (
        "quote with text around a fence",
        "> Note:\n> ```\n> a < b\n> ```\n> **end**",
        "<blockquote>Note:\n<pre>a &lt; b</pre>\n<b>end</b></blockquote>",
    ),
    (
        "a quote inside a quote is flattened (Telegram cannot nest quotes)",
        "> outer\n> > inner *it*",
        "<blockquote>outer\ninner <i>it</i></blockquote>",
    ),
    (
        "a '>' line inside a quoted fence is code",
        "> ```\n> > not a quote\n> ```",
        "<blockquote><pre>&gt; not a quote</pre></blockquote>",
    ),
    # -- tables: inline markup shown as its visible text -----------------------------------
    (
        "bold, italic, code, links and strikethrough in cells",
        "| 이름 | 설명 |\n|---|---|\n| **굵게** | *기울임* 과 `code` |\n| [링크](https://ex.com) | ~~취소~~ |",
        "<pre>이름 | 설명\n-----+---------------\n굵게 | 기울임 과 code\n링크 | 취소</pre>",
    ),
    (
        "escaped pipes in cells",
        "| a | b |\n|---|---|\n| `x\\|y` | 1 \\| 2 |",
        "<pre>a   | b\n----+------\nx|y | 1 | 2</pre>",
    ),
    # -- uneven delimiter runs -------------------------------------------------------------
    (
        "a closing run longer than the opener: the extra star stays inside",
        "**feature/***: 기능 브랜치",
        "<b>feature/*</b>: 기능 브랜치",
    ),
    (
        "*** opening an outer * and an inner **",
        "***중요** 사항*",
        "<i><b>중요</b> 사항</i>",
    ),
    (
        "* closed by the last star of ***",
        "*a **b***",
        "<i>a <b>b</b></i>",
    ),
    (
        "** closed by the first two of ***",
        "**a *b***",
        "<b>a <i>b</i></b>",
    ),
    (
        "an unmatched * before a matched ** pair",
        "*note: use **bold**",
        "*note: use <b>bold</b>",
    ),
    ("arithmetic stays literal (rule of 3)", "2**3*4", "2**3*4"),
    ("arithmetic stays literal, the other way round", "2*3**2", "2*3**2"),
    ("python star-args stay literal", "def f(*args, **kwargs)", "def f(*args, **kwargs)"),
    ("__init__ stays a name", "__init__ and __main__", "__init__ and __main__"),
    ("Korean after a quoted bold word", '**"인용"**은 굵게', '<b>"인용"</b>은 굵게'),
    # -- reference-style links -------------------------------------------------------------
    (
        "full and shortcut references; definitions are not shown",
        'See [the docs][docs] and [Ref].\n\n[docs]: https://docs.example.com\n[ref]: <https://ref.example.com> "Title"',
        'See <a href="https://docs.example.com">the docs</a> and <a href="https://ref.example.com">Ref</a>.',
    ),
    (
        "collapsed reference",
        "[docs][] here\n\n[docs]: https://d.example/a?b=1&c=2",
        '<a href="https://d.example/a?b=1&amp;c=2">docs</a> here',
    ),
    ("undefined references stay text", "[a][nope] and [b]", "[a][nope] and [b]"),
    ("a line that only looks like a definition is shown", "[참고]: 중요한 내용", "[참고]: 중요한 내용"),
    (
        "a definition inside a code block is code",
        "```\n[x]: https://x.example\n```",
        "<pre>[x]: https://x.example</pre>",
    ),
    (
        "numbered citations",
        "Claude says so [1].\n\n[1]: https://anthropic.com",
        'Claude says so <a href="https://anthropic.com">1</a>.',
    ),
    # -- hard line breaks ------------------------------------------------------------------
    ("trailing backslash is a line break", "first line\\\nsecond line", "first line\nsecond line"),
    ("an escaped backslash at the end stays", "path C:\\\\\nnext", "path C:\\\nnext"),
    ("a backslash at the very end is text", "end\\", "end\\"),
    ("a backslash break in a list item", "- a\\\n  b", "• a\n  b"),
]


@pytest.mark.parametrize(("name", "markdown", "expected"), CASES, ids=[c[0] for c in CASES])
def test_corpus(name, markdown, expected):
    parse_html(expected)  # the expectation itself is valid Telegram HTML
    assert render(markdown) == expected
