"""Fake Telegram Bot API and Anthropic Messages API servers: real HTTP on 127.0.0.1."""
