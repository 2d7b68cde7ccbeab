"""A fake Telegram Bot API server: the methods the bot uses, over real HTTP.

Tests push updates (``send_text``/``send_photo``/``push_update``) that the bot fetches
with ``getUpdates``, and read ``calls`` / ``sent`` / ``visible`` / ``chat_view`` /
``drafts`` to see what the bot did. Failures can be injected per method
(``fail_next``), e.g. a 429 with ``retry_after``.

Like Telegram, it parses ``parse_mode=HTML`` strictly (only Telegram's tags, balanced,
``<``, ``>`` and ``&`` escaped elsewhere, and nested as the Bot API's "Formatting options"
allow: nothing inside code/pre, no code/pre inside bold, italic, underline, strikethrough,
spoiler or a link, no link in a link, no blockquote in a blockquote) and answers 400 "Bad
Request: can't parse entities: …" otherwise; it counts the 4096 limit on the text after parsing, refuses an
edit to the same text ("message is not modified") and drafts outside private chats.
A method it does not implement gets Telegram's 404 "Not Found", ``sendChatAction`` an unknown action a
400, ``setMyCommands`` a malformed command a 400, and a call without the ``chat_id`` its method needs
400 "chat_id is empty".
It also refuses what Telegram refuses before a method runs (``_refusal``): chats the bot
cannot write to (``blocked_chats``: 403, ``unknown_chats``: 400 "chat not found"),
captions over 1024 characters, and a reply to a message that does not exist unless
``allow_sending_without_reply`` is set. ``hold`` keeps the answer to a matching call back
until the test releases it (e.g. to kill the bot after Telegram got a message but before
the bot heard so).
"""

from __future__ import annotations

import html
import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from tests.fakes.http import FakeHTTPServer, hang_guard

BOT_ID = 777000
BOT_USERNAME = "memory_test_bot"
GROUP_SENDER = 1001  # who writes in a group when a test names nobody


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)
    filenames: dict[str, str] = field(default_factory=dict)


@dataclass
class Failure:
    method: str
    code: int
    description: str
    retry_after: int | None = None
    when: Callable[[dict[str, Any]], bool] | None = None


ATTACHMENTS: dict[str, dict[str, Any]] = {
    "sticker": {"sticker": {"file_id": "stk1", "file_unique_id": "stk1u", "type": "regular", "width": 512,
                            "height": 512, "is_animated": False, "is_video": False, "emoji": "😀"}},
    "voice": {"voice": {"file_id": "voc1", "file_unique_id": "voc1u", "duration": 3, "mime_type": "audio/ogg"}},
    "video_note": {"video_note": {"file_id": "vn1", "file_unique_id": "vn1u", "length": 240, "duration": 4}},
    "location": {"location": {"latitude": 37.5665, "longitude": 126.978}},
    "poll": {"poll": {"id": "poll1", "question": "점심?", "total_voter_count": 0, "is_closed": False,
                      "is_anonymous": True, "type": "regular", "allows_multiple_answers": False,
                      "allows_revoting": False, "members_only": False,
                      "options": [{"text": "국밥", "voter_count": 0, "persistent_id": "o1"},
                                  {"text": "냉면", "voter_count": 0, "persistent_id": "o2"}]}},
    "contact": {"contact": {"phone_number": "+821012345678", "first_name": "Jisoo", "user_id": 4321}},
}  # fmt: skip
"""Message fields of the kinds the bot cannot read, as Telegram delivers them (no text)."""


CHAT_ACTIONS = frozenset({
    "typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice", "upload_document",
    "choose_sticker", "find_location", "record_video_note", "upload_video_note",
})  # fmt: skip
"""The actions sendChatAction accepts; any other is a 400."""

CHAT_METHODS = frozenset({
    "sendMessage", "editMessageText", "sendMessageDraft", "sendChatAction", "sendDocument", "sendPhoto",
    "deleteMessage", "getChatMember", "getChatAdministrators", "getChat",
})  # fmt: skip
"""The methods that need a ``chat_id``: without one Telegram answers 400 "chat_id is empty"."""


class EntityError(ValueError):
    """Telegram could not parse the HTML; the message is its description after "can't parse entities: "."""


HTML_TAGS = {
    "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre",
    "blockquote", "tg-spoiler", "span", "tg-emoji",
}  # fmt: skip
_NO_CODE_INSIDE = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "tg-spoiler", "span"}
_TAG = re.compile(
    r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z-]+(?:\s*=\s*(?:\"[^\"<>]*\"|'[^'<>]*'|[^\s\"'<>]+))?)*)\s*>"
)
_ENTITY = re.compile(r"&(?:lt|gt|amp|quot|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});")


def _u16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def parse_html(text: str) -> tuple[str, list[tuple[str, int, int]]]:
    """(visible text, [(tag, start, end) in UTF-16 units]) of Telegram HTML, or EntityError."""
    out: list[str] = []
    stack: list[tuple[str, int, str]] = []  # (tag, start, attributes)
    entities: list[tuple[str, int, int]] = []
    i = 0

    def at() -> int:
        return len(text[:i].encode())

    while i < len(text):
        c = text[i]
        if c == "<":
            m = _TAG.match(text, i)
            if m is None:
                raise EntityError(f"Unsupported start tag at byte offset {at()}")
            closing, name, attrs = m.group(1) == "/", m.group(2).lower(), m.group(3)
            if name not in HTML_TAGS:
                raise EntityError(f'Unsupported start tag "{name}" at byte offset {at()}')
            pos = _u16("".join(out))
            if closing:
                if not stack:
                    raise EntityError(f'Unexpected end tag "{name}" at byte offset {at()}')
                top, start, _ = stack.pop()
                if top != name:
                    raise EntityError(
                        f'Unmatched end tag at byte offset {at()}, expected "</{top}>", found "</{name}>"'
                    )
                entities.append((name, start, pos))
            else:
                parent = stack[-1][0] if stack else None
                if parent == "code" or (parent == "pre" and name != "code"):
                    raise EntityError(f'Entities can\'t be nested in "{parent}" at byte offset {at()}')
                # "bold, italic, underline, strikethrough, and spoiler entities can contain and can be part of any
                # other entities, except pre and code"; "all other entities can't contain each other" (a link)
                holder = next((t for t, _, _ in reversed(stack) if t in _NO_CODE_INSIDE), None)
                if name in ("code", "pre") and holder is not None and not (name == "code" and parent == "pre"):
                    raise EntityError(f'Entity "{name}" can\'t be nested in "{holder}" at byte offset {at()}')
                if name == "a" and any(t == "a" for t, _, _ in stack):
                    raise EntityError(f'Entity "a" can\'t be nested in "a" at byte offset {at()}')
                if name == "blockquote" and any(t == "blockquote" for t, _, _ in stack):
                    raise EntityError(f"Blockquote can't be nested at byte offset {at()}")
                if name == "span" and 'class="tg-spoiler"' not in attrs:
                    raise EntityError(f'Unsupported start tag "span" at byte offset {at()}')
                if name == "a" and "href" not in attrs:
                    raise EntityError(f'Tag "a" must have attribute "href" at byte offset {at()}')
                stack.append((name, pos, attrs))
            i = m.end()
        elif c == "&":
            m = _ENTITY.match(text, i)
            if m is None:
                raise EntityError(f"Character '&' is reserved and must be escaped at byte offset {at()}")
            out.append(html.unescape(m.group(0)))
            i = m.end()
        elif c == ">":
            raise EntityError(f"Character '>' is reserved and must be escaped at byte offset {at()}")
        else:
            out.append(c)
            i += 1
    if stack:
        raise EntityError(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    return "".join(out), sorted(entities, key=lambda e: (e[1], -e[2]))


def _is_html(p: dict[str, Any]) -> bool:
    return str(p.get("parse_mode") or "").upper() == "HTML"


def _decode(value: str) -> Any:
    try:
        return json.loads(value)
    except (json.JSONDecodeError, ValueError):
        return value


class FakeTelegram(FakeHTTPServer):
    def __init__(self, token: str = "123456:TEST-TOKEN-abcdefghijklmnop") -> None:
        super().__init__()
        self.token = token
        self.calls: list[Call] = []
        self.files: dict[str, bytes] = {}
        self.drafts_enabled = True  # False: sendMessageDraft answers 404 like an older Bot API server
        self.blocked_chats: set[int] = set()  # the user blocked the bot (or it was removed from the group): 403
        self.unknown_chats: set[int] = set()  # chats that do not exist for the bot: 400 "chat not found"
        self.user_messages: dict[int, set[int]] = {}  # chat -> ids of the messages pushed as updates
        self.bot_messages: dict[int, dict[int, dict[str, Any]]] = {}  # chat -> message id -> state
        # group chat -> user -> status ("creator", "administrator", "member", …); senders become members
        self.members: dict[int, dict[int, str]] = {}
        self.users: dict[int, dict[str, Any]] = {}  # user id -> User object, as last seen in an update
        self._updates: list[dict[str, Any]] = []
        self._failures: list[Failure] = []
        self._update_ids = itertools.count(1)
        self.last_update_id = 0
        self._message_ids = itertools.count(1000)
        self._cond = threading.Condition()
        self._closed = False
        self.webhook: dict[str, Any] | None = None  # what setWebhook set: url, secret_token, ...
        self.webhook_error: str | None = None  # getWebhookInfo's last_error_message while a webhook is set
        self.flood: FloodControl | None = None  # opt-in flood control (see FloodControl below)
        self._holds: list[tuple[str, Callable[[dict[str, Any]], bool], threading.Event]] = []
        self.commands: dict[str, list[dict[str, Any]]] = {}  # setMyCommands: (scope, language) -> the menu
        self.idle_poll = 5.0  # the longest getUpdates waits for an update before it answers [] (at most its timeout)

    @property
    def base_url(self) -> str:
        """What the bot gets as TELEGRAM_BASE_URL."""
        return f"{self.url}/bot"

    def stop(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            for _, _, released in self._holds:
                released.set()
        super().stop()

    def hold(self, method: str, when: Callable[[dict[str, Any]], bool] = lambda p: True) -> threading.Event:
        """The next matching call is handled (and recorded) as usual, but its answer waits until the
        returned event is set."""
        released = threading.Event()
        with self._cond:
            self._holds.append((method, when, released))
        return released

    # -- test API: incoming ----------------------------------------------------
    def push_update(self, update: dict[str, Any]) -> int:
        with self._cond:
            update_id = next(self._update_ids)
            self.last_update_id = update_id
            self._updates.append({"update_id": update_id, **update})
            self._note_message(update)
            self._cond.notify_all()
            return update_id

    def message(
        self,
        chat_id: int,
        text: str | None = None,
        *,
        user_id: int | None = None,
        first_name: str = "Minji",
        language_code: str | None = "ko",
        chat_type: str = "private",
        reply_to: dict[str, Any] | None = None,
        is_bot: bool = False,
        **extra: Any,
    ) -> dict[str, Any]:
        """A Message object as Telegram would deliver it (``extra``: more fields, e.g. ``ATTACHMENTS[kind]``)."""
        # in a private chat the chat is the user; a group's sender is a user (ids are positive)
        uid = user_id if user_id is not None else (chat_id if chat_type == "private" else GROUP_SENDER)
        user: dict[str, Any] = {"id": uid, "is_bot": is_bot, "first_name": first_name}
        if language_code:
            user["language_code"] = language_code
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        if chat_type == "private":
            chat["first_name"] = first_name
        else:
            chat["title"] = "Test group"
        msg: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": chat,
            "from": user,
            **extra,
        }
        if text is not None:
            msg["text"] = text
            entities = []
            if text.startswith("/"):
                cmd = text.split()[0]
                entities.append({"type": "bot_command", "offset": 0, "length": _u16(cmd)})
            entities += self.mentions(text)
            if entities:
                msg["entities"] = entities
        if reply_to is not None:
            msg["reply_to_message"] = reply_to
        return msg

    @staticmethod
    def mentions(text: str) -> list[dict[str, Any]]:
        """The "mention" entities Telegram would attach to ``text`` (UTF-16 offsets)."""
        return [
            {"type": "mention", "offset": _u16(text[: m.start()]), "length": _u16(m.group(0))}
            for m in re.finditer(r"(?<![\w@])@[A-Za-z][A-Za-z0-9_]{3,31}", text)
        ]

    def bot_message(self, chat_id: int, message_id: int) -> dict[str, Any]:
        """A message as the bot sent it, to put in ``reply_to`` (its current text)."""
        with self._cond:
            state = self.bot_messages[int(chat_id)][int(message_id)]
            return self._bot_message({"chat_id": chat_id}, text=state["text"], message_id=int(message_id))

    def newest_bot_message(self, chat_id: int, timeout: float = 60.0) -> dict[str, Any]:
        """The newest message the bot sent to ``chat_id``, as ``bot_message`` gives it. It waits until the fake keeps
        one: a call is recorded, and wakes ``wait_for``, before the message it made is kept."""
        newest = self.wait_for(lambda: max(self.bot_messages.get(int(chat_id), {}), default=0), timeout)
        return self.bot_message(chat_id, newest)

    def add_photo(self, file_id: str, data: bytes, width: int = 1280, height: int = 960) -> list[dict[str, Any]]:
        """Store a photo for download; returns its PhotoSize list (a thumbnail and the photo), smallest first."""
        thumb = b"\xff\xd8\xff thumb " + file_id.encode()
        self.files[file_id + "_thumb"] = thumb
        self.files[file_id] = data
        return [
            {"file_id": file_id + "_thumb", "file_unique_id": file_id + "_tu", "width": 90, "height": 68,
             "file_size": len(thumb)},
            {"file_id": file_id, "file_unique_id": file_id + "_u", "width": width, "height": height,
             "file_size": len(data)},
        ]  # fmt: skip

    def send_photo(self, chat_id: int, file_id: str, data: bytes, caption: str | None = None, **kw: Any) -> int:
        """Deliver a photo (stored for download under ``file_id``) with an optional caption."""
        extra: dict[str, Any] = {"photo": self.add_photo(file_id, data)}
        if caption is not None:
            extra["caption"] = caption
            if mentions := self.mentions(caption):
                extra["caption_entities"] = mentions
        return self.push_update({"message": self.message(chat_id, None, **extra, **kw)})

    def send_document(
        self,
        chat_id: int,
        file_id: str,
        data: bytes | None,
        file_name: str,
        mime_type: str | None,
        caption: str | None = None,
        *,
        size: int | None = None,
        **kw: Any,
    ) -> int:
        """Deliver a file (stored for download under ``file_id`` unless ``data`` is None) with an optional
        caption; ``size`` overrides the announced file size."""
        if data is not None:
            self.files[file_id] = data
        doc: dict[str, Any] = {"file_id": file_id, "file_unique_id": file_id + "_u", "file_name": file_name}
        if mime_type is not None:
            doc["mime_type"] = mime_type
        if size is not None or data is not None:
            doc["file_size"] = size if size is not None else len(data or b"")
        extra: dict[str, Any] = {"document": doc}
        if caption is not None:
            extra["caption"] = caption
            if mentions := self.mentions(caption):
                extra["caption_entities"] = mentions
        return self.push_update({"message": self.message(chat_id, None, **extra, **kw)})

    def send_kind(self, chat_id: int, kind: str, **kw: Any) -> int:
        """Deliver a message that carries ``kind`` (a key of ATTACHMENTS: sticker, voice, poll, …) and no text."""
        return self.push_update({"message": self.message(chat_id, None, **ATTACHMENTS[kind], **kw)})

    def send_forwarded(self, chat_id: int, text: str, *, from_name: str = "Jisoo", **kw: Any) -> int:
        """A text the user forwarded from someone else (``forward_origin``)."""
        origin = {"type": "user", "date": int(time.time()) - 3600,
                  "sender_user": {"id": 4321, "is_bot": False, "first_name": from_name}}  # fmt: skip
        return self.push_update({"message": self.message(chat_id, text, forward_origin=origin, **kw)})

    def send_edit(self, chat_id: int, message_id: int, text: str, **kw: Any) -> int:
        """The user edited an earlier message (an ``edited_message`` update)."""
        message = self.message(chat_id, text, **kw)
        message.update(message_id=message_id, edit_date=int(time.time()))
        return self.push_update({"edited_message": message})

    def send_channel_post(self, chat_id: int, text: str) -> int:
        """A post in a channel where the bot is an admin (``channel_post``: no sender user)."""
        chat = {"id": chat_id, "type": "channel", "title": "Test channel"}
        post = {"message_id": next(self._message_ids), "date": int(time.time()), "chat": chat, "sender_chat": chat,
                "text": text}  # fmt: skip
        return self.push_update({"channel_post": post})

    def send_service(self, chat_id: int, kind: str, **kw: Any) -> int:
        """A service message in a group: ``new_chat_members`` (someone joined) or ``pinned_message``."""
        if kind == "new_chat_members":
            extra: dict[str, Any] = {"new_chat_members": [{"id": 5555, "is_bot": False, "first_name": "Newbie"}]}
        elif kind == "pinned_message":
            extra = {"pinned_message": self.message(chat_id, "고정된 공지", chat_type="supergroup")}
        else:
            raise ValueError(kind)
        return self.push_update({"message": self.message(chat_id, None, chat_type="supergroup", **extra, **kw)})

    def send_document_meta(self, chat_id: int, file_id: str, *, mime_type: str, file_size: int, **kw: Any) -> int:
        """A file sent as a document; only its metadata (nothing is stored for download unless added)."""
        document = {"file_id": file_id, "file_unique_id": file_id + "u", "file_name": f"{file_id}.bin",
                    "mime_type": mime_type, "file_size": file_size}  # fmt: skip
        return self.push_update({"message": self.message(chat_id, None, document=document, **kw)})

    def send_text(self, chat_id: int, text: str, **kw: Any) -> int:
        """Deliver a text message to the bot; returns the update id."""
        return self.push_update({"message": self.message(chat_id, text, **kw)})

    def fail_next(
        self,
        method: str,
        code: int = 400,
        description: str = "Bad Request",
        *,
        retry_after: int | None = None,
        when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        with self._cond:
            self._failures.append(Failure(method, code, description, retry_after, when))

    # -- test API: outgoing --------------------------------------------------------
    def calls_of(self, method: str, chat_id: int | None = None) -> list[Call]:
        with self._cond:
            return [
                c
                for c in self.calls
                if c.method == method and (chat_id is None or str(c.params.get("chat_id")) == str(chat_id))
            ]

    def sent(self, chat_id: int | None = None) -> list[str]:
        """Texts of sendMessage calls that succeeded, in order."""
        return [str(c.params.get("text")) for c in self.calls_of("sendMessage", chat_id) if not c.params.get("_failed")]

    def visible(self, chat_id: int | None = None) -> list[str]:
        """What the user saw of each successful sendMessage: the text after HTML parsing."""
        out = []
        for c in self.calls_of("sendMessage", chat_id):
            if c.params.get("_failed"):
                continue
            text = str(c.params.get("text"))
            out.append(parse_html(text)[0] if _is_html(c.params) else text)
        return out

    def chat_view(self, chat_id: int) -> list[str]:
        """The current text of every message the bot sent to ``chat_id`` (edits applied), oldest first."""
        with self._cond:
            messages = self.bot_messages.get(int(chat_id), {})
            return [messages[k]["text"] for k in sorted(messages) if messages[k].get("text") is not None]

    def drafts(self, chat_id: int | None = None) -> list[str]:
        """Texts of the sendMessageDraft calls that succeeded, in order."""
        return [str(c.params.get("text", "")) for c in self.calls_of("sendMessageDraft", chat_id)
                if not c.params.get("_failed")]  # fmt: skip

    def documents(self, chat_id: int | None = None) -> list[tuple[str, bytes]]:
        """(file name, bytes) of every document the bot sent."""
        return [(c.filenames.get("document", ""), c.files.get("document", b""))
                for c in self.calls_of("sendDocument", chat_id) if not c.params.get("_failed")]  # fmt: skip

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 60.0) -> Any:
        """Wait until ``predicate()`` is true (checked at every call the bot makes); ``timeout`` stops a hang
        (scaled by ``hang_guard``)."""
        deadline = time.monotonic() + hang_guard(timeout)
        with self._cond:
            while True:
                value = predicate()
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        "timed out waiting for the bot; calls: " + ", ".join(c.method for c in self.calls[-20:])
                    )
                self._cond.wait(min(left, 0.2))

    def wait_fetched(self, update_id: int | None = None, timeout: float = 30.0) -> None:
        """Wait until the bot fetched every update up to ``update_id`` (default: the last one pushed).

        The bot confirms updates by asking for the next offset; a bot stopped after this
        (SIGTERM) has handled every one of them before it exits.
        """
        with self._cond:
            last = update_id if update_id is not None else self.last_update_id

        def fetched() -> bool:
            return any(int(c.params.get("offset") or 0) > last for c in self.calls if c.method == "getUpdates")

        try:
            self.wait_for(fetched, timeout)
        except AssertionError:
            offsets = [c.params.get("offset") for c in self.calls_of("getUpdates")]
            raise AssertionError(f"the bot did not fetch update {last}; getUpdates offsets: {offsets}") from None

    def wait_visible(self, chat_id: int, n: int = 1, timeout: float = 60.0) -> list[str]:
        """Wait until ``n`` messages were sent to ``chat_id``; return what the user saw of each."""
        return self.wait_for(lambda: (s := self.visible(chat_id)) and len(s) >= n and s, timeout)

    def wait_sent(self, chat_id: int, n: int = 1, timeout: float = 60.0) -> list[str]:
        """Wait until ``n`` messages were sent to ``chat_id``; return all sent there."""
        return self.wait_for(lambda: (s := self.sent(chat_id)) and len(s) >= n and s, timeout)

    # -- HTTP -------------------------------------------------------------------------
    def handle(self, request: BaseHTTPRequestHandler, method: str) -> None:
        raw = self.read_body(request)
        path = unquote(request.path.split("?")[0])  # PTB percent-encodes file paths (the token's ":")
        file_prefix = f"/file/bot{self.token}/"
        if path.startswith(file_prefix):
            data = self.files.get(path[len(file_prefix) :])
            if data is None:
                self.respond(request, 404, b"not found", "text/plain")
            else:
                self.respond(request, 200, data, "application/octet-stream")
            return
        prefix = f"/bot{self.token}/"
        if not path.startswith(prefix):
            self.respond(
                request, 401, json.dumps({"ok": False, "error_code": 401, "description": "Unauthorized"}).encode()
            )
            return
        api_method = path[len(prefix) :]
        params, files = self._params(request, raw)
        if "?" in request.path:
            params.update({k: _decode(v) for k, v in parse_qsl(request.path.split("?", 1)[1])})
        call = Call(api_method, params, files, filenames=dict(params.get("_filenames") or {}))
        with self._cond:
            self.calls.append(call)
            failure = next(
                (f for f in self._failures if f.method == api_method and (f.when is None or f.when(params))), None
            )
            if failure is not None:
                self._failures.remove(failure)
                params["_failed"] = True
            elif self.flood is not None and (wait := self.flood.check(api_method, params.get("chat_id"))):
                failure = Failure(api_method, 429, f"Too Many Requests: retry after {wait}", wait)
                params["_failed"] = params["_flood"] = True
            self._cond.notify_all()
        if failure is not None:
            body: dict[str, Any] = {"ok": False, "error_code": failure.code, "description": failure.description}
            if failure.retry_after is not None:
                body["parameters"] = {"retry_after": failure.retry_after}
            self.respond(request, failure.code, json.dumps(body).encode())
            return
        with self._cond:
            held = next((h for h in self._holds if h[0] == api_method and h[1](params)), None)
            if held is not None:
                self._holds.remove(held)
        handler = getattr(self, f"api_{api_method}", None)
        if handler is None:  # Telegram answers 404 to a method it does not have
            result: Any = (404, "Not Found")
        elif (refused := self._refusal(api_method, params)) is not None:
            result = refused
        else:
            result = handler(params)
        with self._cond:  # what the call changed (a message's text) is seen by wait_for at once
            self._cond.notify_all()
        if held is not None:
            held[2].wait(60)
        if isinstance(result, tuple):  # (error code, description)
            code, description = result
            with self._cond:
                params["_failed"] = True
            self.respond(
                request, code, json.dumps({"ok": False, "error_code": code, "description": description}).encode()
            )
            return
        self.respond(request, 200, json.dumps({"ok": True, "result": result}).encode())

    def _params(self, request: BaseHTTPRequestHandler, raw: bytes) -> tuple[dict[str, Any], dict[str, bytes]]:
        ctype = request.headers.get("Content-Type", "")
        if ctype.startswith("application/json"):
            return (json.loads(raw) if raw else {}), {}
        if ctype.startswith("multipart/form-data"):
            msg = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + raw)
            params: dict[str, Any] = {}
            files: dict[str, bytes] = {}
            filenames: dict[str, str] = {}
            for part in msg.iter_parts():
                name = part.get_param("name", header="content-disposition")
                payload = part.get_payload(decode=True) or b""
                if part.get_filename():
                    files[str(name)] = payload
                    filenames[str(name)] = str(part.get_filename())
                    params[str(name)] = f"<file {part.get_filename()}>"
                else:
                    params[str(name)] = _decode(payload.decode())
            # PTB sends an attached file as "attach://<name>" in the field, the bytes in part <name>
            for key, value in list(params.items()):
                if isinstance(value, str) and value.startswith("attach://") and value[9:] in files:
                    files[key] = files[value[9:]]
                    filenames[key] = filenames[value[9:]]
            if filenames:
                params["_filenames"] = filenames
            return params, files
        return {k: _decode(v) for k, v in parse_qsl(raw.decode(), keep_blank_values=True)}, {}

    # -- what Telegram refuses before any method runs --------------------------------------
    def _note_message(self, update: dict[str, Any]) -> None:
        """Remember the id of a message pushed as an update (it can be replied to) and its sender."""
        message = update.get("message") or update.get("edited_message")
        if isinstance(message, dict) and "chat" in message:
            chat_id = int(message["chat"]["id"])
            self.user_messages.setdefault(chat_id, set()).add(int(message["message_id"]))
            sender = message.get("from")
            if isinstance(sender, dict):
                self.users[int(sender["id"])] = sender
                if message["chat"].get("type") in ("group", "supergroup"):
                    self.members.setdefault(chat_id, {}).setdefault(int(sender["id"]), "member")

    def set_member(self, chat_id: int, user_id: int, status: str, first_name: str = "Admin") -> None:
        """Make ``user_id`` a ``creator``/``administrator``/``member`` of the group ``chat_id``."""
        with self._cond:
            self.users.setdefault(user_id, {"id": user_id, "is_bot": False, "first_name": first_name})
            self.members.setdefault(int(chat_id), {})[int(user_id)] = status

    def _message_exists(self, chat_id: int, message_id: int) -> bool:
        with self._cond:
            return message_id in self.bot_messages.get(chat_id, {}) or message_id in self.user_messages.get(chat_id, ())

    def _refusal(self, method: str, p: dict[str, Any]) -> tuple[int, str] | None:
        """(code, description) when Telegram would refuse the call whatever the method, else None."""
        if method in CHAT_METHODS and p.get("chat_id") in (None, ""):
            if not (method == "editMessageText" and p.get("inline_message_id")):
                return 400, "Bad Request: chat_id is empty"
        try:
            chat_id = int(p["chat_id"]) if "chat_id" in p else None
        except (TypeError, ValueError):
            chat_id = None
        if chat_id is not None and chat_id in self.unknown_chats:
            return 400, "Bad Request: chat not found"
        if chat_id is not None and chat_id in self.blocked_chats:
            if chat_id > 0:
                return 403, "Forbidden: bot was blocked by the user"
            return 403, "Forbidden: bot was kicked from the supergroup chat"
        if p.get("caption"):
            caption = self._visible(p, "caption", allow_empty=True)
            if isinstance(caption, tuple):
                return caption[0], caption[1].replace("message is too long", "message caption is too long")
        return self._reply_refusal(chat_id, p)

    def _reply_refusal(self, chat_id: int | None, p: dict[str, Any]) -> tuple[int, str] | None:
        """A reply to a message that does not exist, without ``allow_sending_without_reply``."""
        reply = p.get("reply_parameters")
        if isinstance(reply, dict):
            target, allow = reply.get("message_id"), reply.get("allow_sending_without_reply")
            chat_id = int(reply.get("chat_id") or chat_id or 0)
        else:
            target, allow = p.get("reply_to_message_id"), p.get("allow_sending_without_reply")
        if target is None or allow or chat_id is None or self._message_exists(chat_id, int(target)):
            return None
        return 400, "Bad Request: message to be replied not found"

    # -- Bot API methods ----------------------------------------------------------------
    def api_getMe(self, p: dict[str, Any]) -> Any:  # noqa: N802
        return {
            "id": BOT_ID,
            "is_bot": True,
            "first_name": "Memory",
            "username": BOT_USERNAME,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }

    def api_setWebhook(self, p: dict[str, Any]) -> Any:  # noqa: N802
        """Like Telegram: an HTTPS URL (or "" to remove it), and a secret token of 1-256 A-Z a-z 0-9 _ -."""
        url = str(p.get("url") or "")
        if not url:
            with self._cond:
                self.webhook = None
            return True
        if not url.startswith("https://"):
            return 400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook"
        # core.telegram.org/bots/api#setwebhook, Notes: "Ports currently supported for webhooks: 443, 80, 88,
        # 8443." (the error's wording is a guess, as seen in bots' logs)
        if (urlsplit(url).port or 443) not in (443, 80, 88, 8443):
            return 400, "Bad Request: bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443"
        secret = p.get("secret_token")
        if secret is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", str(secret)):
            return 400, "Bad Request: secret token contains unallowed characters"
        with self._cond:
            self.webhook = {k: v for k, v in p.items() if not k.startswith("_")}
        return True

    def api_deleteWebhook(self, p: dict[str, Any]) -> Any:  # noqa: N802
        with self._cond:
            self.webhook = None
        return True

    def api_getWebhookInfo(self, p: dict[str, Any]) -> Any:  # noqa: N802
        """The set URL, and a delivery error a test puts in ``webhook_error`` (Telegram's last_error_*)."""
        with self._cond:
            url = (self.webhook or {}).get("url", "")
            info: dict[str, Any] = {"url": url, "has_custom_certificate": False, "pending_update_count": 0}
            if url and self.webhook_error:
                info.update(
                    last_error_date=int(time.time()), last_error_message=self.webhook_error, pending_update_count=3
                )
        return info

    def api_getUpdates(self, p: dict[str, Any]) -> Any:  # noqa: N802
        with self._cond:
            if self.webhook is not None:
                return (
                    409,
                    "Conflict: can't use getUpdates method while webhook is active; "
                    "use deleteWebhook to delete the webhook first",
                )
        offset = int(p.get("offset") or 0)
        timeout = float(p.get("timeout") or 0)
        deadline = time.monotonic() + min(timeout, self.idle_poll)
        with self._cond:
            while True:
                self._updates = [u for u in self._updates if u["update_id"] >= offset]
                if self._updates or self._closed:
                    return list(self._updates[: int(p.get("limit") or 100)])
                left = deadline - time.monotonic()
                if left <= 0:
                    return []
                self._cond.wait(left)

    def _chat(self, chat_id: Any) -> dict[str, Any]:
        cid = int(chat_id)
        return {"id": cid, "type": "private" if cid > 0 else "supergroup", "first_name": "Minji"}

    def _bot_message(self, p: dict[str, Any], **fields: Any) -> dict[str, Any]:
        return {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": self._chat(p["chat_id"]),
            "from": {"id": BOT_ID, "is_bot": True, "first_name": "Memory", "username": BOT_USERNAME},
            **fields,
        }

    def _visible(self, p: dict[str, Any], key: str = "text", allow_empty: bool = False) -> str | tuple[int, str]:
        """The text after parsing, or (400, description) as Telegram would answer."""
        raw = str(p.get(key) or "")
        text = raw
        if _is_html(p):
            try:
                text = parse_html(raw)[0]
            except EntityError as e:
                return 400, f"Bad Request: can't parse entities: {e}"
        if not text.strip() and not allow_empty:
            return 400, "Bad Request: message text is empty"
        if _u16(text) > (1024 if key == "caption" else 4096):
            return 400, "Bad Request: message is too long"
        return text

    def _remember(self, p: dict[str, Any], message: dict[str, Any], text: str | None) -> dict[str, Any]:
        with self._cond:
            self.bot_messages.setdefault(int(p["chat_id"]), {})[message["message_id"]] = {
                "text": text,
                "raw": p.get("text"),
                "html": _is_html(p),
            }
        return message

    def api_sendMessage(self, p: dict[str, Any]) -> Any:  # noqa: N802
        text = self._visible(p)
        if isinstance(text, tuple):
            return text
        return self._remember(p, self._bot_message(p, text=text), text)

    def api_editMessageText(self, p: dict[str, Any]) -> Any:  # noqa: N802
        text = self._visible(p)
        if isinstance(text, tuple):
            return text
        chat_id, message_id = int(p["chat_id"]), int(p["message_id"])
        with self._cond:
            state = self.bot_messages.get(chat_id, {}).get(message_id)
            if state is None:
                return 400, "Bad Request: message to edit not found"
            markup = parse_html(str(p["text"]))[1] if _is_html(p) else []
            old_markup = parse_html(str(state["raw"]))[1] if state["html"] else []
            if state["text"] == text and markup == old_markup:
                return 400, (
                    "Bad Request: message is not modified: specified new message content and reply markup "
                    "are exactly the same as a current content and reply markup of the message"
                )
            state.update(text=text, raw=p["text"], html=_is_html(p))
        return self._bot_message(p, text=text, message_id=message_id, edit_date=int(time.time()))

    def api_sendMessageDraft(self, p: dict[str, Any]) -> Any:  # noqa: N802
        if not self.drafts_enabled:
            return 404, "Not Found"
        if int(p["chat_id"]) <= 0:
            return 400, "Bad Request: message drafts can be sent only to private chats"
        if int(p.get("draft_id") or 0) == 0:
            return 400, "Bad Request: draft_id must be non-zero"
        text = self._visible(p, allow_empty=True)
        return text if isinstance(text, tuple) else True

    def api_deleteMessage(self, p: dict[str, Any]) -> Any:  # noqa: N802
        with self._cond:
            if self.bot_messages.get(int(p["chat_id"]), {}).pop(int(p["message_id"]), None) is None:
                return 400, "Bad Request: message to delete not found"
        return True

    def api_sendDocument(self, p: dict[str, Any]) -> Any:  # noqa: N802
        if p.get("caption"):
            caption = self._visible(p, "caption")
            if isinstance(caption, tuple):
                return caption
        name = str((p.get("_filenames") or {}).get("document", "document"))
        return self._remember(
            p, self._bot_message(p, document={"file_id": "doc1", "file_unique_id": "doc1u", "file_name": name}), None
        )

    def api_sendPhoto(self, p: dict[str, Any]) -> Any:  # noqa: N802
        photo = [{"file_id": "pho1", "file_unique_id": "pho1u", "width": 90, "height": 90}]
        return self._remember(p, self._bot_message(p, photo=photo), None)

    def api_getFile(self, p: dict[str, Any]) -> Any:  # noqa: N802
        file_id = str(p["file_id"])
        if file_id not in self.files:
            return 400, "Bad Request: invalid file_id"
        return {
            "file_id": file_id,
            "file_unique_id": file_id + "u",
            "file_size": len(self.files[file_id]),
            "file_path": file_id,
        }

    def api_sendChatAction(self, p: dict[str, Any]) -> Any:  # noqa: N802
        if str(p.get("action") or "").strip().lower() not in CHAT_ACTIONS:
            return 400, "Bad Request: wrong parameter action in request"
        return True

    @staticmethod
    def _commands_key(p: dict[str, Any]) -> str:
        scope = p.get("scope") or {"type": "default"}
        return json.dumps([scope, p.get("language_code") or ""], sort_keys=True)

    def api_setMyCommands(self, p: dict[str, Any]) -> Any:  # noqa: N802
        """Like Telegram: at most 100 commands, each 1-32 of a-z 0-9 _ with a 1-256 character description."""
        commands = p.get("commands")
        if not isinstance(commands, list):
            return 400, "Bad Request: can't parse commands JSON object"
        if len(commands) > 100:
            return 400, "Bad Request: BOT_COMMANDS_TOO_MUCH"
        for c in commands:
            if not isinstance(c, dict) or not re.fullmatch(r"[a-z0-9_]{1,32}", str(c.get("command") or "")):
                return 400, "Bad Request: BOT_COMMAND_INVALID"
            if not 1 <= len(str(c.get("description") or "").strip()) <= 256:
                return 400, "Bad Request: BOT_COMMAND_DESCRIPTION_INVALID"
        with self._cond:
            self.commands[self._commands_key(p)] = [dict(c) for c in commands]
        return True

    def api_deleteMyCommands(self, p: dict[str, Any]) -> Any:  # noqa: N802
        with self._cond:
            self.commands.pop(self._commands_key(p), None)
        return True

    def api_getMyCommands(self, p: dict[str, Any]) -> Any:  # noqa: N802
        with self._cond:
            return list(self.commands.get(self._commands_key(p), []))

    def _member(self, chat_id: int, user_id: int, status: str) -> dict[str, Any]:
        """A ChatMember object with the fields Telegram always sends for ``status``."""
        user = self.users.get(user_id, {"id": user_id, "is_bot": False, "first_name": str(user_id)})
        member: dict[str, Any] = {"status": status, "user": user}
        if status == "creator":
            member["is_anonymous"] = False
        elif status == "administrator":
            rights = ("can_manage_chat", "can_delete_messages", "can_manage_video_chats", "can_restrict_members",
                      "can_promote_members", "can_change_info", "can_invite_users", "can_post_stories",
                      "can_edit_stories", "can_delete_stories")  # fmt: skip
            member.update({"can_be_edited": False, "is_anonymous": False, **dict.fromkeys(rights, True)})
        return member

    def _member_params(self, p: dict[str, Any], need_user: bool) -> tuple[int, int] | tuple[int, str]:
        if "chat_id" not in p:
            return 400, "Bad Request: chat_id is empty"
        if need_user and "user_id" not in p:
            return 400, "Bad Request: user_id is empty"
        try:
            return int(p["chat_id"]), int(p.get("user_id") or 0)
        except (TypeError, ValueError):
            return 400, "Bad Request: invalid user_id specified"

    def api_getChatMember(self, p: dict[str, Any]) -> Any:  # noqa: N802
        """Like Telegram: a user who never was in the group is "left"; a private chat has its user as member."""
        parsed = self._member_params(p, need_user=True)
        if isinstance(parsed[1], str):
            return parsed
        chat_id, user_id = parsed
        with self._cond:
            if chat_id > 0:
                if user_id != chat_id:
                    return 400, "Bad Request: member not found"
                return self._member(chat_id, user_id, "member")
            return self._member(chat_id, user_id, self.members.get(chat_id, {}).get(user_id, "left"))

    def api_getChatAdministrators(self, p: dict[str, Any]) -> Any:  # noqa: N802
        parsed = self._member_params(p, need_user=False)
        if isinstance(parsed[1], str):
            return parsed
        chat_id = int(parsed[0])
        if chat_id > 0:
            return 400, "Bad Request: there are no administrators in the private chat"
        with self._cond:
            members = self.members.get(chat_id, {})
            return [self._member(chat_id, uid, st) for uid, st in members.items() if st in ("creator", "administrator")]


# -- flood control (opt-in: ``FakeTelegram.flood = FloodControl()``) -------------------------------


class TokenBucket:
    """``burst`` calls at once, refilled at ``rate`` per second."""

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate, self.burst = rate, burst
        self.level, self.at = burst, now

    def wait(self, now: float) -> float:
        """Seconds until a call is allowed (0: now)."""
        self.level = min(self.burst, self.level + (now - self.at) * self.rate)
        self.at = now
        return 0.0 if self.level >= 1 else (1 - self.level) / self.rate

    def take(self) -> None:
        self.level -= 1


class SlidingWindow:
    """At most ``limit`` calls in any ``period`` seconds."""

    def __init__(self, limit: int, period: float) -> None:
        self.limit, self.period = limit, period
        self.times: list[float] = []

    def wait(self, now: float) -> float:
        self.times = [t for t in self.times if t > now - self.period]
        return 0.0 if len(self.times) < self.limit else self.times[0] + self.period - now

    def take(self, now: float) -> None:
        self.times.append(now)


class FloodControl:
    """Telegram's flood limits: about 30 messages a second in all, about one a second in a private chat
    (short bursts tolerated), 20 a minute in a group. Beyond them a call is refused with 429 and the
    ``retry_after`` (whole seconds, at least 1) after which it would pass. Refused calls are not counted.

    ``COUNTED`` are the methods that count; everything else (chat actions, getters, deletes) is free.
    """

    COUNTED = frozenset({"sendMessage", "editMessageText", "sendMessageDraft", "sendDocument", "sendPhoto"})

    def __init__(
        self,
        per_second: float = 30,
        burst: float = 30,
        private_rate: float = 1.0,
        private_burst: float = 3,
        group_limit: int = 20,
        group_period: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        strict: bool = False,
    ) -> None:
        self.clock = clock
        # strict: never more than ``per_second`` in any one second (no idle burst on top)
        self.total: TokenBucket | SlidingWindow = (
            SlidingWindow(int(per_second), 1.0) if strict else TokenBucket(per_second, burst, clock())
        )
        self.private_rate, self.private_burst = private_rate, private_burst
        self.group_limit, self.group_period = group_limit, group_period
        self.chats: dict[int, TokenBucket | SlidingWindow] = {}
        self.counted = 0
        self.refused: dict[str, int] = {}  # method -> 429s answered
        self.refused_by: dict[str, int] = {}  # "all" (the bot's budget) or "chat" -> 429s answered

    def _chat(self, chat_id: int, now: float) -> TokenBucket | SlidingWindow:
        limit = self.chats.get(chat_id)
        if limit is None:
            if chat_id > 0:
                limit = TokenBucket(self.private_rate, self.private_burst, now)
            else:
                limit = SlidingWindow(self.group_limit, self.group_period)
            self.chats[chat_id] = limit
        return limit

    def check(self, method: str, chat_id: Any) -> int:
        """0 if the call may pass (it is counted), else the retry_after to answer with a 429."""
        if method not in self.COUNTED or chat_id is None:
            return 0
        now = self.clock()
        try:
            key = int(chat_id)
        except ValueError:  # "@channelusername": a channel, limited like a group
            key = -abs(hash(chat_id)) - 1
        chat = self._chat(key, now)
        total_wait, chat_wait = self.total.wait(now), chat.wait(now)
        wait = max(total_wait, chat_wait)
        if wait > 0:
            self.refused[method] = self.refused.get(method, 0) + 1
            by = "all" if total_wait >= chat_wait else "chat"
            self.refused_by[by] = self.refused_by.get(by, 0) + 1
            return max(1, int(-(-wait // 1)))  # whole seconds, rounded up
        if isinstance(self.total, TokenBucket):
            self.total.take()
        else:
            self.total.take(now)
        if isinstance(chat, TokenBucket):
            chat.take()
        else:
            chat.take(now)
        self.counted += 1
        return 0
