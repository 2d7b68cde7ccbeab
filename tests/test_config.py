from pathlib import Path

import pytest

from bot.config import DEFAULT_MODEL, ConfigError, load_settings

BASE = {"TELEGRAM_BOT_TOKEN": "1:abc", "ANTHROPIC_API_KEY": "sk-x"}


def test_defaults():
    s = load_settings(dict(BASE))
    assert s.anthropic_model == DEFAULT_MODEL == "claude-sonnet-5-5"
    assert (s.effort, s.max_tokens) == ("medium", 16384)
    assert s.telegram_base_url == "https://api.telegram.org/bot"
    assert s.data_dir == Path("data")
    assert s.timezone == "Asia/Seoul"
    assert (s.max_history_messages, s.max_history_chars) == (20, 8000)
    assert s.allowed_users == frozenset() and s.owner_id is None  # closed: nobody but a paired owner
    assert (s.daily_message_limit, s.daily_token_limit) == (50, 200_000) and s.model_prices == ()
    assert s.stream_interval == 1.0
    assert load_settings({**BASE, "STREAM_INTERVAL": "0.25"}).stream_interval == 0.25
    assert s.telegram_rate_factor == 1.0  # Telegram's own per-chat limits
    assert load_settings({**BASE, "TELEGRAM_RATE_FACTOR": "20"}).telegram_rate_factor == 20.0


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
    assert s.owner_id == 1  # the first id of ALLOWED_USERS, as written
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
        ({**BASE, "TELEGRAM_RATE_FACTOR": "0.5"}, "TELEGRAM_RATE_FACTOR must be at least 1"),
        ({**BASE, "OWNER_ID": "me"}, "OWNER_ID"),
        ({**BASE, "DAILY_MESSAGE_LIMIT": "-1"}, "DAILY_MESSAGE_LIMIT must be at least 0"),
        ({**BASE, "DAILY_TOKEN_LIMIT": "lots"}, "DAILY_TOKEN_LIMIT"),
        ({**BASE, "MODEL_PRICES": "claude-sonnet-4"}, "MODEL_PRICES entry 'claude-sonnet-4' must look like"),
        ({**BASE, "MODEL_PRICES": "claude-sonnet-4=3"}, "needs 2 or 4 prices"),
        ({**BASE, "MODEL_PRICES": "claude-sonnet-4=3/x"}, "prices must be numbers"),
        ({**BASE, "MODEL_PRICES": "claude-sonnet-4=3/-15"}, "not negative"),
        ({**BASE, "MODEL_PRICES": "claude-sonnet-4=3/nan"}, "finite"),
    ],
)
def test_bad_settings_name_the_problem(env, needle):
    with pytest.raises(ConfigError) as e:
        load_settings(env)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_owner_and_limits_and_prices_are_read():
    s = load_settings(
        {
            **BASE,
            "ALLOWED_USERS": "5,6",
            "OWNER_ID": "77",
            "DAILY_MESSAGE_LIMIT": "0",
            "DAILY_TOKEN_LIMIT": "1000",
            "MODEL_PRICES": "claude-sonnet-4=2/10; my-model=0.5/1.5/0.6/0.05,",
        }
    )
    assert s.owner_id == 77 and s.allowed_users == {5, 6}
    assert (s.daily_message_limit, s.daily_token_limit) == (0, 1000)
    prices = dict(s.model_prices)
    assert prices["claude-sonnet-4"].cache_write == 2.5 and prices["claude-sonnet-4"].cache_read == 0.2
    assert (prices["my-model"].cache_write, prices["my-model"].cache_read) == (0.6, 0.05)


def test_terminal_chat_needs_no_telegram_token():
    assert load_settings({"ANTHROPIC_API_KEY": "k"}, need_telegram=False).telegram_bot_token == ""


def test_dotenv_file_is_read_and_environment_wins(tmp_path, monkeypatch):
    (tmp_path / ".env").write_text("TELEGRAM_BOT_TOKEN=from-file\nANTHROPIC_API_KEY=file-key\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    s = load_settings()
    assert s.telegram_bot_token == "from-file" and s.anthropic_api_key == "env-key"


def test_effort_is_one_of_the_documented_levels():
    assert load_settings({**BASE, "EFFORT": " High "}).effort == "high"
    with pytest.raises(ConfigError, match="EFFORT"):
        load_settings({**BASE, "EFFORT": "extreme"})


def test_recall_meaning_is_on_unless_turned_off() -> None:
    assert load_settings(BASE).recall_meaning is True
    assert load_settings({**BASE, "RECALL_MEANING": "off"}).recall_meaning is False
    assert load_settings({**BASE, "RECALL_MEANING": "ON"}).recall_meaning is True
    with pytest.raises(ConfigError, match="RECALL_MEANING must be on or off"):
        load_settings({**BASE, "RECALL_MEANING": "maybe"})
