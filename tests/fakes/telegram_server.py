"""A fake Telegram Bot API server: the methods the bot uses, over real HTTP.

Tests push updates (``send_text``/``push_update``) that the bot fetches with
``getUpdates``, and read ``calls`` / ``sent`` to see what the bot did. Failures can
be injected per method (``fail_next``), e.g. a 429 with ``retry_after``.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl

from tests.fakes.http import FakeHTTPServer

BOT_ID = 777000
BOT_USERNAME = "memory_test_bot"


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)


@dataclass
class Failure:
    method: str
    code: int
    description: str
    retry_after: int | None = None
    when: Callable[[dict[str, Any]], bool] | None = None


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
        self._updates: list[dict[str, Any]] = []
        self._failures: list[Failure] = []
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(1000)
        self._cond = threading.Condition()
        self._closed = False

    @property
    def base_url(self) -> str:
        """What the bot gets as TELEGRAM_BASE_URL."""
        return f"{self.url}/bot"

    def stop(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        super().stop()

    # -- test API: incoming ----------------------------------------------------
    def push_update(self, update: dict[str, Any]) -> int:
        with self._cond:
            update_id = next(self._update_ids)
            self._updates.append({"update_id": update_id, **update})
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
        **extra: Any,
    ) -> dict[str, Any]:
        """A Message object as Telegram would deliver it."""
        uid = user_id if user_id is not None else chat_id
        user: dict[str, Any] = {"id": uid, "is_bot": False, "first_name": first_name}
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
            if text.startswith("/"):
                cmd = text.split()[0]
                msg["entities"] = [{"type": "bot_command", "offset": 0, "length": len(cmd)}]
        if reply_to is not None:
            msg["reply_to_message"] = reply_to
        return msg

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

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 15.0) -> Any:
        deadline = time.monotonic() + timeout
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

    def wait_sent(self, chat_id: int, n: int = 1, timeout: float = 15.0) -> list[str]:
        """Wait until ``n`` messages were sent to ``chat_id``; return all sent there."""
        return self.wait_for(lambda: (s := self.sent(chat_id)) and len(s) >= n and s, timeout)

    # -- HTTP -------------------------------------------------------------------------
    def handle(self, request: BaseHTTPRequestHandler, method: str) -> None:
        raw = self.read_body(request)
        path = request.path.split("?")[0]
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
        call = Call(api_method, params, files)
        with self._cond:
            self.calls.append(call)
            failure = next(
                (f for f in self._failures if f.method == api_method and (f.when is None or f.when(params))), None
            )
            if failure is not None:
                self._failures.remove(failure)
                params["_failed"] = True
            self._cond.notify_all()
        if failure is not None:
            body: dict[str, Any] = {"ok": False, "error_code": failure.code, "description": failure.description}
            if failure.retry_after is not None:
                body["parameters"] = {"retry_after": failure.retry_after}
            self.respond(request, failure.code, json.dumps(body).encode())
            return
        handler = getattr(self, f"api_{api_method}", None)
        if handler is None:
            result: Any = True
        else:
            result = handler(params)
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
            for part in msg.iter_parts():
                name = part.get_param("name", header="content-disposition")
                payload = part.get_payload(decode=True) or b""
                if part.get_filename():
                    files[str(name)] = payload
                    params[str(name)] = f"<file {part.get_filename()}>"
                else:
                    params[str(name)] = _decode(payload.decode())
            return params, files
        return {k: _decode(v) for k, v in parse_qsl(raw.decode(), keep_blank_values=True)}, {}

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

    def api_getUpdates(self, p: dict[str, Any]) -> Any:  # noqa: N802
        offset = int(p.get("offset") or 0)
        timeout = float(p.get("timeout") or 0)
        deadline = time.monotonic() + min(timeout, 5.0)
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

    def _check_text(self, p: dict[str, Any]) -> tuple[int, str] | None:
        text = str(p.get("text", ""))
        if not text.strip():
            return 400, "Bad Request: message text is empty"
        if len(text.encode("utf-16-le")) // 2 > 4096:
            return 400, "Bad Request: message is too long"
        return None

    def api_sendMessage(self, p: dict[str, Any]) -> Any:  # noqa: N802
        error = self._check_text(p)
        if error:
            return error
        return self._bot_message(p, text=p["text"])

    def api_editMessageText(self, p: dict[str, Any]) -> Any:  # noqa: N802
        error = self._check_text(p)
        if error:
            return error
        return self._bot_message(p, text=p["text"], message_id=int(p["message_id"]), edit_date=int(time.time()))

    def api_sendDocument(self, p: dict[str, Any]) -> Any:  # noqa: N802
        return self._bot_message(
            p, document={"file_id": "doc1", "file_unique_id": "doc1u", "file_name": "transcript.jsonl"}
        )

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

    def api_getMyCommands(self, p: dict[str, Any]) -> Any:  # noqa: N802
        return []
