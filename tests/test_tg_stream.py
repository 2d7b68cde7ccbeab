"""ReplyStream and the final delivery, against an in-process fake of the Bot methods they call."""

import asyncio
from datetime import timedelta
from types import SimpleNamespace

import pytest
from telegram.error import BadRequest, InvalidToken, NetworkError, RetryAfter

from bot.tg.render import render, render_parts
from bot.tg.send import Target, edit_part, send_markdown
from bot.tg.split import utf16_len
from bot.tg.stream import ReplyStream, preview_text
from tests.fakes.telegram_server import EntityError, parse_html
from tests.fakes.virtual_time import run_virtual

CHAT = 42


class FakeBot:
    """Records calls like Telegram would see them; enforces HTML parsing, length and "not modified"."""

    def __init__(self):
        self.calls: list[tuple[str, dict, float]] = []
        self.errors: dict[str, list[Exception | None]] = {}  # method -> per next call: raise this (None: succeed)
        self.messages: dict[int, str] = {}
        self.markup: dict[int, list] = {}  # message id -> its entities (tag, start, end), as parsed
        self._ids = iter(range(100, 10_000))

    def _enter(self, method: str, **params) -> None:
        self.calls.append((method, params, asyncio.get_running_loop().time()))
        queue = self.errors.get(method)
        if queue and (error := queue.pop(0)) is not None:
            raise error

    @staticmethod
    def _visible(text: str, parse_mode) -> str:
        if parse_mode == "HTML":
            try:
                text = parse_html(text)[0]
            except EntityError as e:
                raise BadRequest(f"Can't parse entities: {e}") from None
        if utf16_len(text) > 4096:
            raise BadRequest("Message is too long")
        return text

    @staticmethod
    def _entities(text: str, parse_mode) -> list:
        return parse_html(text)[1] if parse_mode == "HTML" else []

    async def send_message_draft(self, chat_id, draft_id, text, message_thread_id=None):
        self._enter("draft", chat_id=chat_id, draft_id=draft_id, text=text)
        assert draft_id != 0
        self._visible(text, None)
        return True

    async def send_message(self, chat_id, text, parse_mode=None, message_thread_id=None, reply_parameters=None):
        self._enter("send", chat_id=chat_id, text=text, parse_mode=parse_mode, reply_parameters=reply_parameters)
        mid = next(self._ids)
        self.messages[mid] = self._visible(text, parse_mode)
        self.markup[mid] = self._entities(text, parse_mode)
        return SimpleNamespace(message_id=mid)

    async def edit_message_text(self, text, chat_id, message_id, parse_mode=None):
        self._enter("edit", chat_id=chat_id, message_id=message_id, text=text, parse_mode=parse_mode)
        shown = self._visible(text, parse_mode)
        if message_id not in self.messages:
            raise BadRequest("Message to edit not found")
        entities = self._entities(text, parse_mode)
        if self.messages[message_id] == shown and self.markup[message_id] == entities:
            raise BadRequest("Message is not modified: specified new message content ...")
        self.messages[message_id], self.markup[message_id] = shown, entities
        return True

    async def delete_message(self, chat_id, message_id):
        self._enter("delete", chat_id=chat_id, message_id=message_id)
        self.messages.pop(message_id, None)
        return True

    def of(self, method: str) -> list[dict]:
        return [p for m, p, _ in self.calls if m == method]

    def times(self, method: str) -> list[float]:
        return [at for m, _, at in self.calls if m == method]


FIRST = 0.1  # when the first piece arrives (virtual seconds)
PAUSE = 0.27  # between two pieces: never a whole number of seconds within a test, so no ties with the 1 s throttle


async def feed_slowly(stream: ReplyStream, text: str, chunk: int = 5, pause: float = PAUSE) -> list[tuple[float, str]]:
    """Feed ``text`` piece by piece, ``pause`` virtual seconds apart; returns (time, text fed so far)."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(FIRST)
    fed: list[tuple[float, str]] = []
    for i in range(0, len(text), chunk):
        await stream.feed(text[i : i + chunk])
        fed.append((loop.time(), text[: i + chunk]))
        await asyncio.sleep(pause)
    return fed


def text_at(fed: list[tuple[float, str]], at: float) -> str:
    """What had been fed by virtual time ``at``."""
    return [text for t, text in fed if t <= at + 1e-9][-1]


def stream_for(bot, target: Target, *, drafts: bool, interval: float = 1.0) -> ReplyStream:
    return ReplyStream(bot, target, drafts=drafts, interval=interval, clock=asyncio.get_running_loop().time)


ANSWER = "Here is **the answer** with `code` and more words " * 6


def test_private_chat_shows_throttled_drafts_then_sends_the_message():
    async def body():
        bot = FakeBot()
        stream = stream_for(bot, Target(CHAT), drafts=True)
        fed = await feed_slowly(stream, ANSWER)  # 60 pieces over 16 virtual seconds
        await stream.finish(ANSWER)
        return bot, fed

    bot, fed = run_virtual(body())
    times = bot.times("draft")
    # the first piece is shown at once, then one preview per second (the interval) while text arrives
    assert times == pytest.approx([FIRST + n for n in range(17)])
    drafts = bot.of("draft")
    assert len({d["draft_id"] for d in drafts}) == 1
    # each preview is the plain text (the Markdown as written) that had arrived by then
    assert [d["text"] for d in drafts] == [text_at(fed, t).strip() for t in times]
    assert drafts[-1]["text"] == ANSWER.strip()
    sends = bot.of("send")
    assert len(sends) == 1 and sends[0]["parse_mode"] == "HTML"
    assert sends[0]["text"] == render(ANSWER)
    assert bot.of("edit") == []


def test_identical_preview_is_not_sent_again():
    async def body():
        bot = FakeBot()
        stream = stream_for(bot, Target(CHAT), drafts=True)
        await stream.feed("Hello")
        await asyncio.sleep(2)
        await stream.feed("  \n")  # the preview (stripped) would be the same
        await asyncio.sleep(2)
        await stream.finish("Hello")
        return bot

    bot = run_virtual(body())
    assert [d["text"] for d in bot.of("draft")] == ["Hello"]


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")  # RetryAfter's own constructor
def test_retry_after_pauses_previews_until_the_delay_passed():
    async def body():
        bot = FakeBot()
        bot.errors["draft"] = [RetryAfter(timedelta(seconds=3))]
        stream = stream_for(bot, Target(CHAT), drafts=True)
        fed = await feed_slowly(stream, ANSWER)
        await asyncio.sleep(5)
        await stream.finish(ANSWER)
        return bot, fed

    bot, fed = run_virtual(body())
    times = bot.times("draft")
    # refused at 0.1 with "retry after 3 s": nothing until 3.1, then the throttle as usual
    assert times == pytest.approx([FIRST, FIRST + 3, *(FIRST + n for n in range(4, 17))])
    texts = [d["text"] for d in bot.of("draft")]
    assert texts[1:] == [text_at(fed, t).strip() for t in times[1:]]  # the newest text each time
    assert texts[-1] == ANSWER.strip()
    assert [s["text"] for s in bot.of("send")] == [render(ANSWER)]


def test_refused_drafts_fall_back_to_editing_one_message():
    async def body():
        bot = FakeBot()
        bot.errors["draft"] = [InvalidToken("Not Found")]  # what PTB raises for a 404 (no such method)
        stream = stream_for(bot, Target(CHAT), drafts=True)
        fed = await feed_slowly(stream, ANSWER)
        await stream.finish(ANSWER)
        return bot, stream, fed

    bot, stream, fed = run_virtual(body())
    assert stream.drafts_refused and len(bot.of("draft")) == 1
    sends, edits = bot.of("send"), bot.of("edit")
    # refused at 0.1: at the next preview time a plain message is sent, then edited once a second
    assert bot.times("send") == pytest.approx([FIRST + 1])
    assert len(sends) == 1 and sends[0]["parse_mode"] is None and sends[0]["text"] == text_at(fed, FIRST + 1).strip()
    assert bot.times("edit")[:-1] == pytest.approx([FIRST + n for n in range(2, 17)])
    assert [e["text"] for e in edits[:-1]] == [text_at(fed, t).strip() for t in bot.times("edit")[:-1]]
    assert edits[-1]["parse_mode"] == "HTML" and edits[-1]["text"] == render(ANSWER)
    assert list(bot.messages.values()) == [parse_html(render(ANSWER))[0]]


def test_group_edits_one_message_and_sends_the_rest_of_a_long_answer():
    long_answer = "\n\n".join(f"**Paragraph {i}** " + "word " * 300 for i in range(5))  # > 7000 characters

    async def body():
        bot = FakeBot()
        stream = stream_for(bot, Target(-100, reply_to=7), drafts=False)
        fed = await feed_slowly(stream, long_answer, chunk=200)
        await stream.finish(long_answer)
        return bot, fed

    bot, fed = run_virtual(body())
    sends = bot.of("send")
    assert sends[0]["parse_mode"] is None and sends[0]["reply_parameters"].message_id == 7
    assert all(s["parse_mode"] == "HTML" for s in sends[1:]) and len(sends) >= 2
    assert all(s["reply_parameters"] is None for s in sends[1:])
    edits = bot.of("edit")
    assert edits[-1]["parse_mode"] == "HTML" and edits[-1]["message_id"] == 100
    # one preview a second: the first sent, the next ones edited in; each the newest text of its moment
    preview_times = [bot.times("send")[0], *bot.times("edit")[:-1]]
    assert preview_times == pytest.approx([FIRST + n for n in range(len(preview_times))])
    assert preview_times[-1] + 1 > fed[-1][0]  # until the last piece had been shown
    previews = [sends[0]["text"], *(e["text"] for e in edits[:-1])]
    assert previews == [preview_text(text_at(fed, t)) for t in preview_times]
    assert all(utf16_len(p) <= 4096 for p in previews)
    assert any(p.startswith("…\n") for p in previews)  # a long preview shows the newest end
    shown = "\n\n".join(bot.messages[k] for k in sorted(bot.messages))
    assert shown.split() == parse_html(render(long_answer))[0].split()


def test_short_answer_in_a_group_is_one_message_without_identical_edit():
    async def body():
        bot = FakeBot()
        stream = stream_for(bot, Target(-100), drafts=False)
        await stream.feed("plain answer")
        await asyncio.sleep(2)  # the preview was sent meanwhile
        await stream.finish("plain answer")
        return bot

    bot = run_virtual(body())
    assert [s["text"] for s in bot.of("send")] == ["plain answer"]
    assert bot.of("edit") == []  # the preview already shows exactly the answer


async def test_final_html_refused_is_resent_as_the_markdown_source():
    bot = FakeBot()
    bot.errors["send"] = [BadRequest('Can\'t parse entities: unsupported start tag "x" at byte offset 3')]
    await send_markdown(bot, Target(CHAT), "**bold** and <b>")
    sends = bot.of("send")
    assert [s["parse_mode"] for s in sends] == ["HTML", None]
    assert sends[1]["text"] == "**bold** and <b>"


async def test_any_failure_of_the_final_send_falls_back_to_plain_parts():
    bot = FakeBot()
    bot.errors["send"] = [NetworkError("connection reset"), None, BadRequest("Message is too long")]
    md = "\n\n".join(f"*p{i}* " + "x " * 1500 for i in range(3))
    await send_markdown(bot, Target(CHAT), md)
    sends = bot.of("send")
    assert [s["parse_mode"] for s in sends] == ["HTML", None, "HTML", None, "HTML"]
    assert sends[1]["text"].startswith("*p0* x x")  # the first part again, as its Markdown
    assert sends[3]["text"].startswith("*p1* x x")
    shown = " ".join(bot.messages.values())
    assert shown.split().count("x") == 4500


def test_failure_replaces_the_group_preview_with_the_notice():
    async def body():
        bot = FakeBot()
        stream = stream_for(bot, Target(-100), drafts=False)
        await stream.feed("partial answ")
        await asyncio.sleep(2)  # the preview was sent meanwhile
        assert list(bot.messages.values()) == ["partial answ"]
        await stream.fail("⚠️ failed")
        return bot

    bot = run_virtual(body())
    assert list(bot.messages.values()) == ["⚠️ failed"] and len(bot.of("send")) == 1


async def test_failure_in_private_chat_sends_the_notice():
    bot = FakeBot()
    stream = ReplyStream(bot, Target(CHAT), drafts=True, interval=0.01)
    await stream.fail("⚠️ failed")
    assert [s["text"] for s in bot.of("send")] == ["⚠️ failed"] and bot.of("draft") == []


async def test_the_stand_in_refuses_an_edit_that_changes_nothing_html_or_not():
    """Like Telegram (and tests/fakes/telegram_server.py): same text and same entities is "not modified"."""
    bot = FakeBot()
    mid = (await bot.send_message(CHAT, "<b>bold</b> text", parse_mode="HTML")).message_id
    with pytest.raises(BadRequest, match="not modified"):
        await bot.edit_message_text("<b>bold</b> text", chat_id=CHAT, message_id=mid, parse_mode="HTML")
    await bot.edit_message_text("bold <b>text</b>", chat_id=CHAT, message_id=mid, parse_mode="HTML")  # entities moved
    await bot.edit_message_text("bold text", chat_id=CHAT, message_id=mid)  # entities gone
    with pytest.raises(BadRequest, match="not modified"):
        await bot.edit_message_text("bold text", chat_id=CHAT, message_id=mid)
    assert bot.messages[mid] == "bold text"


async def test_a_final_edit_telegram_finds_unchanged_counts_as_delivered():
    """The final HTML edit of a preview that already shows it (an earlier edit landed, its answer was lost):
    Telegram says "not modified", and nothing is sent again."""
    bot = FakeBot()
    (part,) = render_parts("**bold** text")
    mid = (await bot.send_message(-100, "**bold** text")).message_id  # the plain preview
    assert await edit_part(bot, Target(-100), mid, part, shown="**bold** text")
    assert await edit_part(bot, Target(-100), mid, part, shown="**bold** text")  # refused: not modified
    assert [e["parse_mode"] for e in bot.of("edit")] == ["HTML", "HTML"] and len(bot.of("send")) == 1
    assert bot.messages == {mid: "bold text"} and bot.markup[mid] == [("b", 0, 4)]


@pytest.mark.parametrize("n", [10, 4096, 5000, 20_000])
def test_preview_text_fits_one_message(n):
    text = ("가나다라마 바사\n" * (n // 8 + 1))[:n]
    shown = preview_text(text)
    assert utf16_len(shown) <= 4096
    if utf16_len(text.strip()) <= 4096:
        assert shown == text.strip()
    else:
        assert shown.startswith("…\n") and text.rstrip().endswith(shown[2:].rstrip())


def test_typing_is_kept_alive_until_the_block_ends():
    from bot.tg.handlers import typing

    actions: list[float] = []

    class Bot:
        async def send_chat_action(self, chat_id, action, message_thread_id=None):
            actions.append(asyncio.get_running_loop().time())

    async def body():
        async with typing(SimpleNamespace(bot=Bot()), CHAT, every=4):
            await asyncio.sleep(10)
        await asyncio.sleep(10)  # nothing more after the block

    run_virtual(body())
    assert actions == [0, 4, 8]  # at once, then every 4 s while the block ran
