from bot.tg.app import file_base_url
from bot.tg.split import split_text, utf16_len


def test_short_text_is_one_part():
    assert split_text("안녕") == ["안녕"]
    assert split_text("") == []


def test_splits_on_paragraphs_under_the_limit():
    text = "\n\n".join("p" * 1000 for _ in range(10))
    parts = split_text(text, 4096)
    assert all(utf16_len(p) <= 4096 for p in parts)
    assert "\n\n".join(parts) == text
    assert all(set(p.replace("\n\n", "")) == {"p"} for p in parts)


def test_counts_utf16_units_like_telegram():
    text = "😀" * 3000  # 6000 UTF-16 units, 3000 code points
    parts = split_text(text, 4096)
    assert len(parts) == 2 and all(utf16_len(p) <= 4096 for p in parts)
    assert "".join(parts) == text


def test_hard_cut_inside_a_long_word():
    text = "x" * 10_000
    parts = split_text(text, 4096)
    assert [len(p) for p in parts] == [4096, 4096, 1808]


def test_prefers_line_breaks_over_spaces():
    text = ("a" * 50 + "\n") * 100
    parts = split_text(text, 1000)
    assert all(p.endswith("a") and utf16_len(p) <= 1000 for p in parts)
    assert "\n".join(parts) == text.rstrip("\n")


def test_file_base_url():
    assert file_base_url("https://api.telegram.org/bot") == "https://api.telegram.org/file/bot"
    assert file_base_url("http://127.0.0.1:9/bot/") == "http://127.0.0.1:9/file/bot"


def test_indentation_of_a_parts_first_line_is_kept():
    # the plain-text fallback of a long code answer: every line indented, cut between lines
    code = "\n".join(f"    line_{i} = {i}" for i in range(400))
    parts = split_text(code, 1000)
    assert len(parts) > 3
    for part in parts:
        assert utf16_len(part) <= 1000
        assert all(line.startswith("    line_") for line in part.split("\n")), part[:40]
    assert "\n".join(parts) == code


def test_a_cut_drops_only_the_separator_and_blank_lines():
    text = "a" * 60 + "\n\n\n   indented after blank lines"
    assert split_text(text, 70) == ["a" * 60, "   indented after blank lines"]
    words = "word " * 30  # cut at a space: that one space goes, nothing else
    parts = split_text(words.strip(), 50)
    assert " ".join(parts) == words.strip()
