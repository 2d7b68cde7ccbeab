"""The terminal chat's answer renderer (bot/cli/render.py, stream.py, markdown.py), in-process.

What it writes is fed to a terminal emulator (tests/terminal.py): the screen and the scrollback are
what a user sees, live region included, so duplicated or lost lines would show there.
"""

import io
import os
import re

import pytest

from bot.claude.model import FakeModel
from bot.cli import markdown as cli_markdown
from bot.cli import stream as cli_stream
from bot.cli.chat import ChatSession
from bot.cli.render import Renderer, wants_rendering
from bot.cli.terminal import stream_reader
from bot.core.ask import Assistant
from tests.terminal import Term

SGR = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
BOX = set("─│┌┐└┘├┤┬┴┼━┃╭╮╯╰═║")

ANSWER = """# 오늘의 정리

안녕하세요 **민수**님, `pip install rich` 로 설치해요. 이 문장은 꽤 길어서 터미널 폭을 넘어 다음 줄로 넘어가요.
줄바꿈 하나는 그대로 줄바꿈이에요.

1. 첫째 항목
2. 둘째 항목에 *기울임*
3. 셋째

- 글머리 하나
- 글머리 둘

> 인용문이에요.

```python
def greet(name: str) -> str:
    return f"안녕, {name}!"  # 한글 주석
```

| 이름 | 값 |
|------|----|
| 가   | 1  |

---
끝이에요.
"""


def render(text: str, chunk: int | None = None, *, columns: int = 40, lines: int = 12, close: bool = True) -> str:
    """What the renderer writes for ``text`` fed in pieces of ``chunk`` characters (all at once: None)."""
    out = io.StringIO()
    view = Renderer(out, width=columns, height=lines).start()
    step = chunk or len(text) or 1
    for i in range(0, len(text), step):
        view.feed(text[i : i + step])
    if close:
        view.close()
    return out.getvalue()


def screen(output: str, *, columns: int = 40, lines: int = 12) -> Term:
    term = Term(columns, lines)
    term.feed(output, onlcr=True)
    return term


def test_markdown_is_rendered_not_printed():
    term = screen(render(ANSWER, 7))
    text = "\n".join(term.rows())
    assert "**" not in text and "`" not in text and "# 오늘" not in text and "|" not in text
    assert all(cell.bold for cell in term.styled("민수"))
    assert not any(cell.bold for cell in term.styled("님,"))
    assert all(cell.italics for cell in term.styled("기울임"))
    rows = term.rows()
    assert rows[0].strip() == "오늘의 정리"
    assert "줄바꿈 하나는 그대로 줄바꿈이에요." in rows  # a single newline is a line break
    assert [r for r in rows if r.startswith((" 1.", " 2."))] == [" 1. 첫째 항목", " 2. 둘째 항목에 기울임"]
    assert " • 글머리 하나" in rows
    assert rows[-1] == "끝이에요."
    assert term.cursor_visible


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8, 13, 64])
def test_streamed_in_any_pieces_the_screen_ends_the_same(chunk):
    # the same rows, scrollback included, as when the whole answer arrives at once: no line
    # printed twice, none lost, whatever the live region showed on the way
    whole = screen(render(ANSWER)).rows()
    assert screen(render(ANSWER, chunk)).rows() == whole


def test_blocks_are_separated_by_one_blank_line():
    rows = screen(render("첫 문단\n\n둘째 문단\n\n- 하나\n- 둘\n\n```\ncode\n```\n\n끝", 3)).rows()
    assert rows == ["첫 문단", "", "둘째 문단", "", " • 하나", " • 둘", "", "code", "", "끝"]


def test_code_lines_are_copyable():
    code = ["def greet(name: str) -> str:", '    return f"안녕, {name}!"  # 한글 주석']
    out = render(ANSWER, 4, columns=80)
    rows = screen(out, columns=80).rows()
    at = rows.index(code[0])
    assert rows[at - 1] == "python"  # the language, on its own line above the code
    assert rows[at : at + 2] == code  # as written: no margin, no box, nothing added
    assert not BOX & set("".join(rows[at : at + 2]))
    plain = SGR.sub("", out)
    assert "```" not in plain
    # highlighted: the keyword has a colour of its own
    assert "\x1b[" in out.split("def", 1)[0][-12:]


def test_a_long_line_of_code_reaches_the_terminal_whole():
    line = "x = " + " + ".join(f"value_{i}" for i in range(12))  # wider than the terminal
    out = render(f"```python\n{line}\n```\n", 5, columns=30)
    plain = SGR.sub("", out).replace("\r", "")
    assert f"\n{line}\n" in f"\n{plain}"  # one line: the terminal wraps it, copying gives it back whole
    rows = screen(out, columns=30).rows()
    assert "".join(rows[1:]) == line  # (wrapped by the terminal, over several rows)


@pytest.mark.parametrize(
    ("markdown", "code"),
    [
        ("~~~\nplain\n~~~\n\nafter", ["plain"]),
        ("````md\n```python\nnot a close\n```\n````\n\nafter", ["```python", "not a close", "```"]),
        ("  ```\n  indented\n    more\n  ```\n\nafter", ["indented", "  more"]),  # the fence's indent goes
        ("```no-such-language\nx <- 1\n\n\ny\n```\n\nafter", ["x <- 1", "", "", "y"]),
        ("```\nnever closed\nlast", ["never closed", "last"]),
    ],
)
def test_code_fences_open_and_close_as_commonmark_says(markdown: str, code: list[str]):
    for chunk in (1, 4, None):
        rows = screen(render(markdown, chunk), columns=60).rows()
        label = 1 if rows[0] in ("md", "no-such-language") else 0
        assert rows[label : label + len(code)] == code, (chunk, rows)
        assert rows[label + len(code) :] in ([], ["", "after"]), (chunk, rows)


def test_korean_wide_characters_wrap_inside_the_width():
    sentence = "한글은 한 글자가 두 칸을 차지해요 그래서 줄 끝에서 정확히 맞아야 해요 " * 3
    columns = 21  # odd: a wide character never fits in the last column
    out = render(f"**굵게** {sentence}\n\n다음 문단", 3, columns=columns)
    rows = screen(out, columns=columns).rows()
    from rich.cells import cell_len

    assert all(cell_len(r) <= columns for r in rows)
    assert rows[-2:] == ["", "다음 문단"]
    # the rows are the paragraph, word-wrapped: nothing lost, nothing repeated
    assert " ".join(r for r in rows[:-2]).split() == f"굵게 {sentence}".split()


def test_a_block_taller_than_the_screen_streams_without_duplicates():
    lines = [f"{i}번째 줄이에요" for i in range(40)]
    text = "\n".join(lines) + "\n\n마지막 문단"  # one paragraph (line breaks) of 40 rows on 8 rows
    rows = screen(render(text, 6, lines=8), lines=8).rows()
    assert rows == [*lines, "", "마지막 문단"]


def test_a_long_list_is_printed_item_by_item():
    items = [f"항목 {i}" for i in range(1, 31)]
    text = "".join(f"{i}. {item}\n" for i, item in enumerate(items, 1))
    out = io.StringIO()
    view = Renderer(out, width=40, height=8).start()
    for i in range(0, len(text), 4):
        view.feed(text[i : i + 4])
    expected = [f"{i:>2}. {item}" for i, item in enumerate(items, 1)]
    # before the end, the finished items are in the scrollback for good (not only the last rows
    # of a list that would not fit in the live region), the unfinished one below them
    assert screen(out.getvalue(), lines=8).rows() == expected
    view.close()
    assert screen(out.getvalue(), lines=8).rows() == expected


def test_a_cancelled_answer_leaves_what_arrived_and_a_clean_terminal():
    partial = "첫 문단이에요.\n\n두 번째에 **굵게 시작\n\n```python\nprint('hi')\nprint('unfinis"
    out = render(partial, 3)
    term = screen(out)
    assert term.cursor_visible
    assert out.count("\x1b[?25l") == out.count("\x1b[?25h") == 1
    rows = term.rows()
    assert rows[:3] == ["첫 문단이에요.", "", "두 번째에 **굵게 시작"]  # unclosed bold stays as written
    assert rows[-2:] == ["print('hi')", "print('unfinis"]
    assert rows.count("print('hi')") == 1


def test_the_live_region_is_erased_when_its_block_is_final():
    out = io.StringIO()
    view = Renderer(out, width=40, height=10).start()
    view.feed("첫 문단이 아직 쓰이는 중")
    term = screen(out.getvalue(), lines=10)
    assert term.rows() == ["첫 문단이 아직 쓰이는 중"] and not term.cursor_visible  # live
    view.feed("이에요.\n\n다음")
    view.close()
    term = screen(out.getvalue(), lines=10)
    assert term.rows() == ["첫 문단이 아직 쓰이는 중이에요.", "", "다음"] and term.cursor_visible


def test_rendering_trouble_loses_no_text(monkeypatch: pytest.MonkeyPatch):
    calls = []

    class Broken(cli_markdown.AnswerMarkdown):
        def __init__(self, markup: str) -> None:
            calls.append(markup)
            if "boom" in markup:
                raise RuntimeError("renderer bug")
            super().__init__(markup)

    monkeypatch.setattr(cli_stream, "AnswerMarkdown", Broken)
    out = render("fine **first**\n\nsecond\n\nthen boom **here**\nand the rest", 4)
    term = screen(out)
    assert term.cursor_visible
    rows = term.rows()
    assert rows[0] == "fine first"  # rendered before the trouble
    assert rows[1:] == ["second", "", "then boom **here**", "and the rest"]  # then the raw text, all of it
    assert calls


# -- when answers are rendered -------------------------------------------------------------
def test_rendering_only_on_a_terminal_without_no_color():
    master, slave = os.openpty()
    try:
        with open(slave, "w", closefd=False) as tty:
            assert wants_rendering(tty, {"TERM": "xterm-256color"})
            assert wants_rendering(tty, {})
            assert not wants_rendering(tty, {"NO_COLOR": "1"})
            assert wants_rendering(tty, {"NO_COLOR": ""})  # set but empty does not count (no-color.org)
            assert not wants_rendering(tty, {"TERM": "dumb"})
            assert not wants_rendering(tty, {}, plain=True)
    finally:
        os.close(master)
        os.close(slave)
    assert not wants_rendering(io.StringIO(), {})
    with open(os.devnull, "w") as null:
        assert not wants_rendering(null, {})


# -- in the chat session ---------------------------------------------------------------------
def rendered_chat(assistant: Assistant, *lines: str, columns: int = 60) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    session = ChatSession(assistant, "local", out=out, err=err, renderer=Renderer(out, width=columns, height=20))
    session.run(stream_reader(io.StringIO("".join(f"{line}\n" for line in lines))))
    return out.getvalue(), err.getvalue()


def test_the_chat_renders_answers_and_keeps_commands_plain(assistant: Assistant, fake_model: FakeModel):
    fake_model.chunk = 3
    fake_model.queue("안녕하세요 **민수**님!\n\n- 하나\n- 둘")
    out, err = rendered_chat(assistant, "내 이름은 민수야", "/history")
    assert err == ""
    term = screen(out, columns=60, lines=20)
    rows = term.rows()
    assert "안녕하세요 민수님!" in rows and " • 하나" in rows
    assert all(cell.bold for cell in term.styled("민수님!")[:2])
    # /history shows what was said as it is stored, in its plain layout
    assert "Claude: 안녕하세요 **민수**님!" in rows
    assert term.cursor_visible


def test_an_answer_that_did_not_stream_is_rendered_too(assistant: Assistant, fake_model: FakeModel):
    class Silent(FakeModel):
        async def complete(self, *, on_text=None, **kw):
            return await super().complete(on_text=None, **kw)

    model = Silent()
    model.queue("**한 번에** 온 답")
    out, _ = rendered_chat(Assistant(transcript=assistant.transcript, model=model), "질문")
    term = screen(out, columns=60, lines=20)
    assert "한 번에 온 답" in term.rows() and all(c.bold for c in term.styled("한 번에"))


def test_an_error_after_part_of_an_answer_ends_the_live_region(assistant: Assistant, fake_model: FakeModel):
    from bot.claude.model import ModelError, Reply

    class Failing(FakeModel):
        async def complete(self, *, on_text=None, **kw) -> Reply:
            await on_text("부분 **답**이")
            raise ModelError("overloaded", "HTTP 529")

    out, err = rendered_chat(Assistant(transcript=assistant.transcript, model=Failing()), "질문")
    term = screen(out, columns=60, lines=20)
    assert term.cursor_visible and "부분 답이" in term.rows()
    assert err.strip().endswith("(/retry 로 다시 보낼 수 있어요)")


def test_control_characters_in_an_answer_are_shown_not_obeyed():
    # an escape sequence in the model's text (say, quoted from a hostile document) must not clear
    # the screen or move the cursor: the live region would lose count of its lines
    out = render("첫 줄\n\n지우기 \x1b[2J\x1b[1A 삑\x07 끝", 2)
    rows = screen(out).rows()
    assert rows == ["첫 줄", "", "지우기 ␛[2J␛[1A 삑␇ 끝"]
    assert out.count("\x1b[?2026h") == out.count("\x1b[?2026l") > 0  # every redraw is one synchronized update


def test_the_chat_starts_without_importing_rich():
    # the prompt must not wait for rich (about 0.1 s more at start-up): only the first answer, or
    # the background prewarm, imports it
    import subprocess
    import sys

    from tests.conftest import ROOT

    heavy = "('rich', 'pygments', 'markdown_it')"
    code = f"import sys, bot.cli.terminal; print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy}))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert p.stdout.strip() == "[]"
