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
