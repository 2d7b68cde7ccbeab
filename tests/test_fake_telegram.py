"""The fake Telegram server refuses what the real Bot API refuses (called over HTTP, as the bot does)."""

import json
import urllib.error
import urllib.request

import pytest

from tests.fakes.telegram_server import FakeTelegram

CHAT = 3131
GROUP = -1003131


def call(tg: FakeTelegram, method: str, **params) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"{tg.base_url}{tg.token}/{method}",
        data=json.dumps(params).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def refused(tg: FakeTelegram, method: str, **params) -> tuple[int, str]:
    status, body = call(tg, method, **params)
    assert not body["ok"] and body["error_code"] == status
    return status, body["description"]


def test_a_chat_that_blocked_the_bot_answers_403_to_every_method(fake_telegram: FakeTelegram):
    assert call(fake_telegram, "sendMessage", chat_id=CHAT, text="hi")[1]["ok"]
    fake_telegram.blocked_chats.add(CHAT)
    for method, extra in [
        ("sendMessage", {"text": "hi"}),
        ("sendChatAction", {"action": "typing"}),
        ("sendMessageDraft", {"draft_id": 1, "text": "hi"}),
        ("editMessageText", {"message_id": 1000, "text": "hi"}),
    ]:
        assert refused(fake_telegram, method, chat_id=CHAT, **extra) == (403, "Forbidden: bot was blocked by the user")
    fake_telegram.blocked_chats.add(GROUP)
    assert refused(fake_telegram, "sendMessage", chat_id=GROUP, text="hi")[0] == 403
    assert fake_telegram.sent(CHAT) == ["hi"]  # refused calls are not counted as sent


def test_an_unknown_chat_answers_chat_not_found(fake_telegram: FakeTelegram):
    fake_telegram.unknown_chats.add(GROUP)
    assert refused(fake_telegram, "sendMessage", chat_id=GROUP, text="hi") == (400, "Bad Request: chat not found")


def test_empty_text_after_parsing_is_refused(fake_telegram: FakeTelegram):
    assert refused(fake_telegram, "sendMessage", chat_id=CHAT, text="<b> </b>", parse_mode="HTML") == (
        400,
        "Bad Request: message text is empty",
    )


def test_captions_over_1024_characters_are_refused(fake_telegram: FakeTelegram):
    ok = call(fake_telegram, "sendDocument", chat_id=CHAT, document="x", caption="가" * 1024)
    assert ok[1]["ok"]
    status, description = refused(fake_telegram, "sendDocument", chat_id=CHAT, document="x", caption="가" * 1025)
    assert (status, description) == (400, "Bad Request: message caption is too long")
    # counted after parsing: tags are free
    html_caption = "<b>" + "a" * 1000 + "</b>"
    assert call(fake_telegram, "sendPhoto", chat_id=CHAT, photo="x", caption=html_caption, parse_mode="HTML")[1]["ok"]
    assert refused(fake_telegram, "sendPhoto", chat_id=CHAT, photo="x", caption="😀" * 513)[0] == 400


@pytest.mark.parametrize("legacy", [False, True])
def test_a_reply_to_a_missing_message_is_refused_unless_allowed(fake_telegram: FakeTelegram, legacy):
    message = fake_telegram.message(CHAT, "question")
    fake_telegram.push_update({"message": message})  # the user's message: it can be replied to
    known = message["message_id"]

    def reply(message_id: int, allow: bool | None = None) -> dict:
        if legacy:
            extra = {"reply_to_message_id": message_id}
            if allow is not None:
                extra["allow_sending_without_reply"] = allow
            return extra
        parameters: dict = {"message_id": message_id}
        if allow is not None:
            parameters["allow_sending_without_reply"] = allow
        return {"reply_parameters": parameters}

    assert call(fake_telegram, "sendMessage", chat_id=CHAT, text="a", **reply(known))[1]["ok"]
    assert refused(fake_telegram, "sendMessage", chat_id=CHAT, text="b", **reply(987654)) == (
        400,
        "Bad Request: message to be replied not found",
    )
    assert call(fake_telegram, "sendMessage", chat_id=CHAT, text="c", **reply(987654, allow=True))[1]["ok"]
    bot_message = call(fake_telegram, "sendMessage", chat_id=CHAT, text="d")[1]["result"]["message_id"]
    assert call(fake_telegram, "sendMessage", chat_id=CHAT, text="e", **reply(bot_message))[1]["ok"]
    assert refused(fake_telegram, "sendMessage", chat_id=CHAT + 1, text="f", **reply(known))[0] == 400  # other chat


@pytest.mark.parametrize(
    ("text", "description"),
    [
        ("<b>a <code>x</code></b>", 'Entity "code" can\'t be nested in "b" at byte offset 5'),
        ("<i><u>a <code>x</code></u></i>", 'Entity "code" can\'t be nested in "u" at byte offset 8'),
        ("<s><pre>x</pre></s>", 'Entity "pre" can\'t be nested in "s" at byte offset 3'),
        ("<tg-spoiler><code>x</code></tg-spoiler>", 'Entity "code" can\'t be nested in "tg-spoiler" at byte offset 12'),
        ('<a href="https://e.com"><code>x</code></a>', 'Entity "code" can\'t be nested in "a" at byte offset 24'),
        ('<a href="https://e.com">a <a href="https://f.com">b</a></a>',
         'Entity "a" can\'t be nested in "a" at byte offset 26'),
    ],
)  # fmt: skip
def test_code_inside_another_entity_cannot_be_parsed(fake_telegram: FakeTelegram, text: str, description: str):
    assert refused(fake_telegram, "sendMessage", chat_id=CHAT, text=text, parse_mode="HTML") == (
        400,
        f"Bad Request: can't parse entities: {description}",
    )


@pytest.mark.parametrize(
    "text",
    [
        "<b>a</b> <code>x</code> <b>b</b>",
        "<code>x</code>",
        "<blockquote><b>q </b><code>c</code></blockquote>",
        '<pre><code class="language-python">x</code></pre>',
        '<b>bold <a href="https://e.com">link</a> <i>it</i></b>',
    ],
)
def test_what_telegram_allows_to_nest_is_accepted(fake_telegram: FakeTelegram, text: str):
    status, body = call(fake_telegram, "sendMessage", chat_id=CHAT, text=text, parse_mode="HTML")
    assert status == 200 and body["ok"]


def test_a_method_telegram_does_not_have_answers_404(fake_telegram: FakeTelegram):
    assert refused(fake_telegram, "sendTelepathy", chat_id=CHAT, text="hi") == (404, "Not Found")
    assert refused(fake_telegram, "getMee") == (404, "Not Found")
    assert call(fake_telegram, "getMe")[1]["ok"]


def test_send_chat_action_takes_only_telegrams_actions(fake_telegram: FakeTelegram):
    assert call(fake_telegram, "sendChatAction", chat_id=CHAT, action="typing")[1] == {"ok": True, "result": True}
    for action in ("thinking", "", None):
        assert refused(fake_telegram, "sendChatAction", chat_id=CHAT, action=action) == (
            400,
            "Bad Request: wrong parameter action in request",
        )


@pytest.mark.parametrize(
    ("method", "extra"),
    [
        ("sendMessage", {"text": "hi"}),
        ("editMessageText", {"message_id": 1000, "text": "hi"}),
        ("sendChatAction", {"action": "typing"}),
        ("sendMessageDraft", {"draft_id": 1, "text": "hi"}),
        ("deleteMessage", {"message_id": 1000}),
        ("getChatMember", {"user_id": 1}),
    ],
)
def test_a_call_without_chat_id_answers_400_chat_id_is_empty(fake_telegram: FakeTelegram, method: str, extra):
    assert refused(fake_telegram, method, **extra) == (400, "Bad Request: chat_id is empty")
    assert refused(fake_telegram, method, chat_id="", **extra) == (400, "Bad Request: chat_id is empty")
    assert fake_telegram.sent() == []


def test_set_my_commands_checks_the_commands_and_keeps_the_menu_per_scope_and_language(fake_telegram: FakeTelegram):
    menu = [{"command": "help", "description": "도움말"}]
    assert call(fake_telegram, "setMyCommands", commands=menu)[1]["ok"]
    english = [{"command": "help", "description": "help"}]
    assert call(fake_telegram, "setMyCommands", commands=english, language_code="en")[1]["ok"]
    assert call(fake_telegram, "getMyCommands")[1]["result"] == menu
    assert call(fake_telegram, "getMyCommands", language_code="en")[1]["result"] == english
    for bad, why in [
        ([{"command": "Help", "description": "x"}], "BOT_COMMAND_INVALID"),
        ([{"command": "/help", "description": "x"}], "BOT_COMMAND_INVALID"),
        ([{"command": "a" * 33, "description": "x"}], "BOT_COMMAND_INVALID"),
        ([{"command": "help", "description": ""}], "BOT_COMMAND_DESCRIPTION_INVALID"),
        ([{"command": "help", "description": "x" * 257}], "BOT_COMMAND_DESCRIPTION_INVALID"),
        ([{"command": f"c{i}", "description": "x"} for i in range(101)], "BOT_COMMANDS_TOO_MUCH"),
    ]:
        assert refused(fake_telegram, "setMyCommands", commands=bad) == (400, f"Bad Request: {why}")
    assert call(fake_telegram, "getMyCommands")[1]["result"] == menu  # refused menus change nothing
    assert call(fake_telegram, "deleteMyCommands")[1]["ok"]
    assert call(fake_telegram, "getMyCommands")[1]["result"] == []


def test_the_fakes_answer_without_nagle_delay():
    """An answer is two sends (head, then body): with Nagle's algorithm on, the body waited for the client's
    delayed ACK (up to 40 ms on loopback), so every fake answer (Telegram's, Anthropic's) sets TCP_NODELAY."""
    import socket

    from tests.fakes.http import FakeHTTPServer

    seen: list[int] = []

    class Probe(FakeHTTPServer):
        def handle(self, request, method: str) -> None:
            seen.append(request.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            self.respond(request, 200, b"{}")

    with Probe() as probe, urllib.request.urlopen(f"{probe.url}/", timeout=10) as response:
        assert response.status == 200
    assert seen and seen[0] != 0
