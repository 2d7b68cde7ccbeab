"""What is kept of each export format: one conversation of ChatGPT or Claude, one message of Telegram.

Read from the formats' public descriptions (docs/memory.md, "Importing history", cites them):

- ChatGPT (``conversations.json``): a list of conversations; each has ``mapping`` (node id -> ``{message,
  parent, children}``) and ``current_node``, the last message of the branch the user sees. The messages
  are the path from ``current_node`` up to the root, reversed: answers that were regenerated and
  questions that were edited away sit on other branches and are left out. Kept: messages whose
  ``author.role`` is user or assistant, with ``content_type`` text or multimodal_text, not addressed to a
  tool (``recipient`` other than all) and not ``metadata.is_visually_hidden_from_conversation``; the
  string ``parts`` are the text, an image part becomes ``[image]``; ``create_time`` (epoch seconds).
- Claude (``conversations.json``): a list of conversations with ``uuid``, ``name``, ``created_at`` and
  ``chat_messages``: ``uuid``, ``sender`` (human or assistant), ``created_at``, ``text`` and ``content``
  (blocks: the ``text`` ones are kept, tool use and results are not); attachments become ``[file: name]``.
- Telegram Desktop (``result.json``): one chat (``name``, ``type``, ``id``, ``messages``) or the whole
  account (``chats.list`` and ``left_chats.list`` of such chats). A message has ``id``, ``type``
  (``service`` ones, joins and pins, are skipped), ``date`` / ``date_unixtime``, ``from``, ``text`` (a
  string, or a list of strings and ``{"type", "text"}`` entities), ``forwarded_from``, ``media_type`` /
  ``photo`` / ``file``. Everyone's messages are kept as the user's side of a group, named: ``"Name: text"``.
  A reply (``reply_to_message_id``; with ``reply_to_peer_id`` when the message it answers is in another chat)
  carries the message it answers quoted before it, as the bot stores a reply it receives (bot.tg.references):
  ``"> Mom: How's the new flat?\n\nMinsu: Quiet, with a park"`` (``Replies``).

A conversation or message that does not have the shape described raises ``BadEntry``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from memory.content import MAX_REPLY_CHARS, quote_block, shorten

IMAGE = "[image]"
FORWARDED = "[전달된 메시지 / Forwarded message]"  # as bot.tg.handlers marks a forwarded message
MAX_PATH = 1_000_000  # messages on one ChatGPT branch at most (a cycle in a broken mapping stops here)
REPLY_WINDOW = 10_000  # a Telegram chat's latest messages kept for the replies to them (12 MB at most; 22 of emoji)


class BadEntry(ValueError):
    """A conversation or message without the shape its format describes."""


@dataclass(frozen=True, slots=True)
class Message:
    """One imported message: ``key`` recognizes it again at the next import of the same export."""

    key: str
    role: str  # user | assistant
    text: str
    at: str | None  # ISO 8601 with its zone
    name: str | None = None


@dataclass(slots=True)
class Conversation:
    source: str  # chatgpt | claude | telegram
    key: str  # the conversation's own id in its source
    title: str
    messages: list[Message]


def iso(ts: Any) -> str | None:
    """Epoch seconds (number or digits) as ISO 8601 in UTC; None for anything else."""
    if isinstance(ts, str) and ts.strip().isdigit():
        ts = int(ts)
    if isinstance(ts, bool) or not isinstance(ts, int | float) or not 0 < ts < 1e11:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")


def iso_text(value: Any) -> str | None:
    """An ISO 8601 date as written (normalized; a naive one stays naive), None if it is not one."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt.isoformat(timespec="seconds")


def _dict(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise BadEntry(f"{what} is not an object")
    return value


# -- ChatGPT ------------------------------------------------------------------
def chatgpt(conv: Any) -> Conversation:
    conv = _dict(conv, "a conversation")
    mapping = conv.get("mapping")
    if not isinstance(mapping, Mapping):
        raise BadEntry("no 'mapping' (the messages) in a ChatGPT conversation")
    key = str(conv.get("conversation_id") or conv.get("id") or "")
    title = str(conv.get("title") or "")
    if not key:
        raise BadEntry(f"a ChatGPT conversation without an id ({title!r})")
    node_id = conv.get("current_node")
    if node_id is None and mapping:
        raise BadEntry(f"conversation {title!r} has no 'current_node'")
    path: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    while node_id is not None:
        if node_id in seen or len(path) > MAX_PATH:
            raise BadEntry(f"conversation {title!r}: the mapping has a cycle at {node_id!r}")
        seen.add(node_id)
        node = mapping.get(node_id)
        if not isinstance(node, Mapping):
            raise BadEntry(f"conversation {title!r}: node {node_id!r} is missing from the mapping")
        path.append(node)
        node_id = node.get("parent")
    path.reverse()
    messages = [m for node in path if (m := _chatgpt_message(node.get("message"), title)) is not None]
    return Conversation("chatgpt", key, title, _dated(messages, iso(conv.get("create_time"))))


def _chatgpt_message(msg: Any, title: str) -> Message | None:
    if msg is None:
        return None
    msg = _dict(msg, f"a message of {title!r}")
    author = msg.get("author")
    role = author.get("role") if isinstance(author, Mapping) else None
    if role not in ("user", "assistant"):
        return None  # system, tool
    metadata = msg.get("metadata") if isinstance(msg.get("metadata"), Mapping) else {}
    if metadata.get("is_visually_hidden_from_conversation") or metadata.get("is_user_system_message"):
        return None
    if msg.get("recipient") not in (None, "all"):
        return None  # a call to a tool (python, browser, dalle)
    content = msg.get("content")
    if not isinstance(content, Mapping):
        raise BadEntry(f"conversation {title!r}: a message without 'content'")
    if content.get("content_type") not in ("text", "multimodal_text"):
        return None  # code for a tool, thoughts, browsing, custom instructions
    parts = content.get("parts")
    if not isinstance(parts, list):
        raise BadEntry(f"conversation {title!r}: a message's 'parts' is not a list")
    texts: list[str] = []
    for part in parts:
        if isinstance(part, str):
            if part.strip():
                texts.append(part)
        elif isinstance(part, Mapping):
            kind = str(part.get("content_type") or "")
            if "image" in kind:
                texts.append(IMAGE)
            elif isinstance(part.get("text"), str) and part["text"].strip():  # e.g. audio_transcription
                texts.append(part["text"])
    text = "\n".join(texts).strip()
    if not text:
        return None
    key = str(msg.get("id") or "")
    if not key:
        raise BadEntry(f"conversation {title!r}: a message without an id")
    return Message(key, role, text, iso(msg.get("create_time")))


# -- Claude -------------------------------------------------------------------
def claude(conv: Any) -> Conversation:
    conv = _dict(conv, "a conversation")
    items = conv.get("chat_messages")
    if not isinstance(items, list):
        raise BadEntry("no 'chat_messages' list in a Claude conversation")
    key = str(conv.get("uuid") or "")
    title = str(conv.get("name") or "")
    if not key:
        raise BadEntry(f"a Claude conversation without a uuid ({title!r})")
    messages = [m for item in items if (m := _claude_message(item, title)) is not None]
    return Conversation("claude", key, title, _dated(messages, iso_text(conv.get("created_at"))))


def _dated(messages: list[Message], start: str | None) -> list[Message]:
    """Messages without a time (older exports leave some out) take the one before them, or the
    conversation's start."""
    out, last = [], start
    for m in messages:
        if m.at is None and last is not None:
            m = replace(m, at=last)
        last = m.at or last
        out.append(m)
    return out


def _claude_message(item: Any, title: str) -> Message | None:
    item = _dict(item, f"a message of {title!r}")
    sender = item.get("sender")
    role = {"human": "user", "assistant": "assistant"}.get(str(sender).lower())
    if role is None:
        return None
    texts: list[str] = []
    content = item.get("content")
    if isinstance(content, list) and content:
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
    elif isinstance(item.get("text"), str):
        texts.append(item["text"])
    elif content is not None and not isinstance(content, list):
        raise BadEntry(f"conversation {title!r}: a message's 'content' is not a list")
    for field in ("attachments", "files"):
        for f in item.get(field) or ():
            if isinstance(f, Mapping) and f.get("file_name"):
                texts.append(f"[file: {f['file_name']}]")
    text = "\n".join(t for t in texts if t.strip()).strip()
    key = str(item.get("uuid") or "")
    if not text:
        return None
    if not key:
        raise BadEntry(f"conversation {title!r}: a message without a uuid")
    return Message(key, role, text, iso_text(item.get("created_at")))


# -- Telegram -----------------------------------------------------------------
def telegram_text(value: Any) -> str:
    """``text``: a string, or a list of strings and entities with their ``text``."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        out = []
        for part in value:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                out.append(part["text"])
            else:
                raise BadEntry("a text entity without its text")
        return "".join(out)
    if value is None:
        return ""
    raise BadEntry("'text' is neither a string nor a list of entities")


def _media(msg: Mapping[str, Any]) -> str | None:
    if msg.get("photo"):
        return "[photo]"
    kind = msg.get("media_type")
    if kind == "sticker":
        return f"[sticker {msg.get('sticker_emoji') or ''}]".replace(" ]", "]")
    if kind:
        return f"[{str(kind).replace('_', ' ')}]"
    if msg.get("file"):
        return f"[file: {msg.get('file_name') or 'file'}]"
    if msg.get("poll"):
        question = msg["poll"].get("question") if isinstance(msg["poll"], Mapping) else None
        return f"[poll: {question}]" if question else "[poll]"
    return None


def _an_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Replies:
    """What the latest ``window`` messages of one Telegram chat said, by their ``id``: a reply to one of them is
    stored with it quoted (shortened to MAX_REPLY_CHARS); a reply to an older message, to a message of another
    chat (``reply_to_peer_id``) or to one not kept (a service message, deleted) is stored as it is."""

    def __init__(self, window: int = REPLY_WINDOW) -> None:
        self._said: OrderedDict[int, str] = OrderedDict()
        self._window = window

    def quoted(self, msg: Mapping[str, Any], stored: str) -> str:
        """``stored`` (a message's text as kept) with what it replies to quoted before it, if that is known."""
        to = msg.get("reply_to_message_id")
        said = self._said.get(to) if _an_id(to) and msg.get("reply_to_peer_id") is None else None
        return f"{quote_block(said)}\n\n{stored}" if said else stored

    def keep(self, msg_id: Any, stored: str) -> None:
        """Remember what message ``msg_id`` said (``stored``, without a quote of its own), forgetting the oldest."""
        if _an_id(msg_id):
            self._said[msg_id] = shorten(stored, MAX_REPLY_CHARS)
            if len(self._said) > self._window:
                self._said.popitem(last=False)


def telegram_message(msg: Any, chat_key: str, replies: Replies | None = None) -> Message | None:
    """One message of a Telegram chat, None for a service message or one with nothing to keep; with ``replies``
    (the chat's messages so far), a reply carries what it answers quoted before it."""
    msg = _dict(msg, "a message")
    kind = msg.get("type", "message")
    if kind != "message":
        return None  # service: joined, pinned, called, …
    if "id" not in msg:
        raise BadEntry("a message without an id")
    at = iso(msg.get("date_unixtime")) or iso_text(msg.get("date"))
    if at is None:
        raise BadEntry(f"message {msg['id']} has no date")
    text = telegram_text(msg.get("text")).strip()
    media = _media(msg)
    if media:
        text = f"{media} {text}".strip()
    if not text:
        return None
    sender = str(msg.get("from") or msg.get("from_id") or "?").strip() or "?"
    if msg.get("forwarded_from") is not None:
        text = f"{FORWARDED} ({msg.get('forwarded_from') or '?'}) {text}"
    stored = f"{sender}: {text}"
    if replies is not None:
        said, stored = stored, replies.quoted(msg, stored)
        replies.keep(msg["id"], said)
    return Message(f"{chat_key}/{msg['id']}", "user", stored, at, sender)


def telegram_chat_key(meta: Mapping[str, Any]) -> str:
    """A Telegram chat's own id (its ``id``, else its name)."""
    if meta.get("id") is not None:
        return str(meta["id"])
    if meta.get("name"):
        return "name:" + str(meta["name"])
    raise BadEntry("a chat with neither 'id' nor 'name' before its messages")
