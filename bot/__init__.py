"""Telegram assistant on Claude with durable, file-backed memory."""

__version__ = "0.1.0"
