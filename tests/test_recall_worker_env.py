"""The recall worker process (memory.recall.build) is started without the bot's secrets in its environment."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from memory.recall.build import Builder

SECRETS = {
    "TELEGRAM_BOT_TOKEN": "123456:AAE-telegram-token",
    "ANTHROPIC_API_KEY": "sk-ant-api-key",
    "WEBHOOK_SECRET": "webhook-secret-value",
    "ANTHROPIC_AUTH_TOKEN": "another-token",
}
DUMP = "import json, os; print(json.dumps({'log': 20, 'message': json.dumps(dict(os.environ))}), flush=True)"


def test_the_worker_gets_no_secrets(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("RECALL_KEEP_ME", "kept")
    # a stand-in worker that reports its own environment as a log line, through the real spawn
    builder = Builder(lambda chat: None, command=lambda chat: [sys.executable, "-c", DUMP], quiet=True)
    with caplog.at_level(logging.INFO, logger="memory.recall.build"):
        builder.request("1")
        assert builder.wait_idle(timeout=60)
        builder.stop(timeout=10)
    (line,) = [r.getMessage() for r in caplog.records if "recall index (worker)" in r.getMessage()]
    env = json.loads(line.split(": ", 1)[1])
    assert env["RECALL_KEEP_ME"] == "kept" and env.get("PATH") and env.get("PYTHONPATH")
    assert not set(SECRETS) & set(env)
    assert not any(value in json.dumps(env) for value in SECRETS.values())
