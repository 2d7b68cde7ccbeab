from pathlib import Path

import pytest

from bot.config import DEFAULT_MODEL, ConfigError, load_settings

BASE = {"TELEGRAM_BOT_TOKEN": "1:abc", "ANTHROPIC_API_KEY": "sk-x"}


def test_defaults():
    s = load_settings(dict(BASE))
    assert s.anthropic_model == DEFAULT_MODEL == "claude-sonnet-4-6"
    assert s.telegram_base_url == "https://api.telegram.org/bot"
    assert s.data_dir == Path("data")
    assert s.timezone == "Asia/Seoul"
    assert (s.max_history_messages, s.max_history_chars) == (20, 8000)
    assert s.allowed_users == frozenset() and s.user_allowed(12345)
    assert s.stream_interval == 1.0
    assert load_settings({**BASE, "STREAM_INTERVAL": "0.25"}).stream_interval == 0.25


def test_values_are_read():
    s = load_settings(
        {
            **BASE,
            "ALLOWED_USERS": " 1, 22 ,333,",
            "MAX_HISTORY_MESSAGES": "6",
            "MAX_HISTORY_CHARS": "2000",
            "DATA_DIR": "/tmp/x",
            "TIMEZONE": "Europe/Berlin",
            "ANTHROPIC_MODEL": "claude-opus-4-1",
            "TELEGRAM_BASE_URL": "http://localhost:8081/bot",
        }
    )
    assert s.allowed_users == {1, 22, 333}
    assert s.user_allowed(22) and not s.user_allowed(4) and not s.user_allowed(None)
    assert (s.max_history_messages, s.max_history_chars) == (6, 2000)
    assert s.data_dir == Path("/tmp/x") and s.timezone == "Europe/Berlin"
    assert s.anthropic_model == "claude-opus-4-1" and s.telegram_base_url == "http://localhost:8081/bot"


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"ANTHROPIC_API_KEY": "k"}, "TELEGRAM_BOT_TOKEN"),
        ({"TELEGRAM_BOT_TOKEN": "t"}, "ANTHROPIC_API_KEY"),
        ({}, "TELEGRAM_BOT_TOKEN and ANTHROPIC_API_KEY"),
        ({**BASE, "ALLOWED_USERS": "alice"}, "ALLOWED_USERS"),
        ({**BASE, "MAX_HISTORY_MESSAGES": "lots"}, "MAX_HISTORY_MESSAGES"),
        ({**BASE, "MAX_HISTORY_MESSAGES": "1"}, "at least 2"),
        ({**BASE, "TIMEZONE": "Mars/Olympus"}, "TIMEZONE"),
        ({**BASE, "STREAM_INTERVAL": "fast"}, "STREAM_INTERVAL"),
        ({**BASE, "STREAM_INTERVAL": "0.01"}, "at least 0.05"),
    ],
)
def test_bad_settings_name_the_problem(env, needle):
    with pytest.raises(ConfigError) as e:
        load_settings(env)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_terminal_chat_needs_no_telegram_token():
    assert load_settings({"ANTHROPIC_API_KEY": "k"}, need_telegram=False).telegram_bot_token == ""


def test_dotenv_file_is_read_and_environment_wins(tmp_path, monkeypatch):
    (tmp_path / ".env").write_text("TELEGRAM_BOT_TOKEN=from-file\nANTHROPIC_API_KEY=file-key\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    s = load_settings()
    assert s.telegram_bot_token == "from-file" and s.anthropic_api_key == "env-key"
