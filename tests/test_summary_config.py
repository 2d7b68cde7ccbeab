"""Summary-memory settings and their wiring into the assistant."""

import pytest

from bot.claude.summarizer import Summarizer
from bot.config import ConfigError, load_settings
from bot.wiring import make_assistant
from memory.summary import Budget

BASE = {"TELEGRAM_BOT_TOKEN": "1:abc", "ANTHROPIC_API_KEY": "sk-x"}


def test_summary_defaults_are_phone_sized_and_wired(tmp_path):
    s = load_settings({**BASE, "DATA_DIR": str(tmp_path)})
    assert (s.summary_trigger_messages, s.summary_trigger_chars, s.summary_trigger_tokens) == (16, 6000, 3000)
    assert (s.summary_keep_messages, s.summary_max_chars, s.summary_model) == (6, 2500, "")
    a = make_assistant(s)
    assert isinstance(a.memory.summarize, Summarizer) and a.memory.summarize.model is a.model
    assert a.memory.budget == Budget()
    assert a.memory.budget.trigger_messages <= a.max_messages and a.memory.budget.trigger_chars <= a.max_chars


def test_summary_settings_are_read(tmp_path):
    s = load_settings(
        {
            **BASE,
            "DATA_DIR": str(tmp_path),
            "SUMMARY_TRIGGER_MESSAGES": "10",
            "SUMMARY_TRIGGER_CHARS": "3000",
            "SUMMARY_TRIGGER_TOKENS": "1500",
            "SUMMARY_KEEP_MESSAGES": "4",
            "SUMMARY_MAX_CHARS": "1200",
            "SUMMARY_MODEL": "claude-haiku-4-5",
        }
    )
    a = make_assistant(s)
    assert a.memory.budget == Budget(
        trigger_messages=10, trigger_chars=3000, trigger_tokens=1500, keep_messages=4, max_summary_chars=1200
    )
    assert a.memory.summarize.model.name == "claude-haiku-4-5" and a.model.name != "claude-haiku-4-5"
    assert a.memory.summarize.model.client is a.model.client  # one HTTP client, closed once
    assert a.memory.summarize.max_chars == 1200


@pytest.mark.parametrize(
    ("env", "word"),
    [
        ({"SUMMARY_KEEP_MESSAGES": "15"}, "SUMMARY_KEEP_MESSAGES"),
        ({"SUMMARY_TRIGGER_MESSAGES": "2"}, "SUMMARY_TRIGGER_MESSAGES"),
        ({"SUMMARY_MAX_CHARS": "lots"}, "SUMMARY_MAX_CHARS"),
    ],
)
def test_bad_summary_settings_name_themselves(env, word):
    with pytest.raises(ConfigError, match=word):
        load_settings({**BASE, **env})
