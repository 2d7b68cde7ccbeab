"""End to end: streamed replies, rich text, long replies and fallbacks, through the real bot process."""

import threading

from tests.fakes.anthropic_server import FakeAnthropic, Text
from tests.fakes.telegram_server import FakeTelegram, parse_html

CHAT = 7171
GROUP = -1007171
INTERVAL = 0.2
FAST = {"STREAM_INTERVAL": str(INTERVAL)}
UNLIMITED = {"TELEGRAM_RATE_FACTOR": "20"}
"""The fake has no flood limit: no second between two messages in a chat (the tests of previews keep
Telegram's rate, which paces them)."""


def u16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def ok_calls(tg: FakeTelegram, method: str, chat_id: int):
    return [c for c in tg.calls_of(method, chat_id) if not c.params.get("_failed")]


def test_private_reply_streams_as_drafts_then_one_message_and_survives_429(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    bot = start_bot(**FAST)
    answer = " ".join(f"문장 {i}: 천천히 쓰는 답이에요." for i in range(40))
    gate = threading.Event()  # the rest of the answer waits until the previews resumed after the 429
    fake_anthropic.reply(Text(answer, chunk=25, chunk_delay=0.02, gate=gate, gate_after=1))
    fake_telegram.fail_next("sendMessageDraft", 429, "Too Many Requests: retry after 1", retry_after=1)
    fake_telegram.send_text(CHAT, "천천히 길게 말해 줘")

    def resumed() -> bool:
        drafts = fake_telegram.calls_of("sendMessageDraft", CHAT)
        return any(c.params.get("_failed") for c in drafts) and not drafts[-1].params.get("_failed")

    fake_telegram.wait_for(resumed)
    gate.set()
    assert fake_telegram.wait_visible(CHAT) == [answer]

    drafts = fake_telegram.calls_of("sendMessageDraft", CHAT)
    failed = [c for c in drafts if c.params.get("_failed")]
    shown = [c for c in drafts if not c.params.get("_failed")]
    assert drafts[0] is failed[0] and len(failed) == 1 and shown
    # the refused first preview was shown again once the pause was over: the first piece, as it was then
    assert drafts[0].params["text"] == shown[0].params["text"] == answer[:25].strip()
    assert len({c.params["draft_id"] for c in drafts}) == 1 and drafts[0].params["draft_id"] != 0
    texts = [str(c.params["text"]) for c in shown]
    assert all(answer.startswith(t) for t in texts) and len(set(texts)) == len(texts)
    assert all("parse_mode" not in c.params for c in drafts)  # previews are plain text
    # flood control: nothing for the second Telegram asked for. Lower bounds only: the bot measures
    # from when it got the 429, after the fake sent it, so load can only make the gap longer
    assert shown[0].at - failed[0].at >= 1.0
    gaps = [b.at - a.at for a, b in zip(drafts, drafts[1:], strict=False)]
    assert min(gaps) >= INTERVAL  # throttled (a lower bound again: the bot waits after each answer it got)
    final = fake_telegram.calls_of("sendMessage", CHAT)
    assert len(final) == 1 and final[0].params["parse_mode"] == "HTML"
    assert final[0].at > drafts[-1].at
    actions = fake_telegram.calls_of("sendChatAction", CHAT)
    assert actions and actions[0].at < drafts[0].at  # "typing…" before the first words
    assert fake_telegram.token.split(":")[1] not in bot.log


def test_group_reply_streams_by_editing_one_message(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    start_bot(**FAST)
    answer = "**요약**: " + " ".join(f"항목 {i} 설명이에요." for i in range(30)) + "\n\n- 하나\n- 둘"
    gate = threading.Event()  # the rest of the answer waits until the first preview is on screen
    fake_anthropic.reply(Text(answer, chunk=20, chunk_delay=0.02, gate=gate, gate_after=1))
    question = fake_telegram.message(GROUP, "@memory_test_bot 정리해 줘", chat_type="supergroup", user_id=31)
    fake_telegram.push_update({"message": question})
    fake_telegram.wait_for(lambda: fake_telegram.chat_view(GROUP) == [answer[:20].strip()])
    gate.set()
    expected = "요약: " + " ".join(f"항목 {i} 설명이에요." for i in range(30)) + "\n\n• 하나\n• 둘"
    # the view itself: the fake records a call before it applies it, so a wait for the HTML edit's
    # call could wake before the message shows it (seen once under load: the last preview on screen)
    fake_telegram.wait_for(lambda: fake_telegram.chat_view(GROUP) == [expected])
    assert fake_telegram.calls_of("sendMessageDraft") == []
    sends = fake_telegram.calls_of("sendMessage", GROUP)
    assert len(sends) == 1 and "parse_mode" not in sends[0].params  # the first preview, plain
    assert sends[0].params["reply_parameters"]["message_id"] == question["message_id"]  # quotes the question
    edits = fake_telegram.calls_of("editMessageText", GROUP)
    assert all(not c.params.get("_failed") for c in edits)  # never an identical edit
    assert len(edits) >= 1 and edits[-1].params["parse_mode"] == "HTML"  # the preview message became the answer


def test_refused_drafts_fall_back_to_edits_for_that_chat(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    fake_telegram.drafts_enabled = False  # an older Bot API server: sendMessageDraft is 404
    # the edits of the preview are best effort, sent when the chat's flood budget is full again: at
    # Telegram's one message a second that is seconds per edit; the fake has no flood limit
    start_bot(**FAST, TELEGRAM_RATE_FACTOR="20")
    answer = "오래된 서버에서도 " * 30
    gates = [threading.Event(), threading.Event()]  # each answer waits until its first preview is on screen
    for gate in gates:
        fake_anthropic.reply(Text(answer, chunk=20, chunk_delay=0.02, gate=gate, gate_after=1))
    fake_telegram.send_text(CHAT, "첫 질문")
    fake_telegram.wait_for(lambda: fake_telegram.chat_view(CHAT) == [answer[:20].strip()])  # a plain preview message
    gates[0].set()
    fake_telegram.wait_for(lambda: fake_telegram.chat_view(CHAT) == [answer.strip()])
    assert len(ok_calls(fake_telegram, "editMessageText", CHAT)) >= 1  # the preview was edited into the answer
    assert len(fake_telegram.calls_of("sendMessage", CHAT)) == 1
    fake_telegram.send_text(CHAT, "둘째 질문")
    fake_telegram.wait_for(lambda: fake_telegram.chat_view(CHAT) == [answer.strip(), answer[:20].strip()])
    gates[1].set()
    fake_telegram.wait_for(lambda: fake_telegram.chat_view(CHAT) == [answer.strip(), answer.strip()])
    assert len(fake_telegram.calls_of("sendMessage", CHAT)) == 2  # one message per answer, edited
    assert len(fake_telegram.calls_of("sendMessageDraft", CHAT)) == 1  # not tried again in this chat


def test_markdown_is_rendered_and_unbalanced_markdown_still_arrives(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    start_bot(**FAST, **UNLIMITED)
    rich = "## 결과\n**굵게**, *기울임*, `a<b`, [링크](https://example.com/?a=1&b=2)\n```python\nprint(1 < 2)\n```"
    broken = "**닫히지 않은 굵게와 _기울임, `코드 그리고 <div> & [반쪽 링크](http://"
    fake_anthropic.reply(rich, broken)
    fake_telegram.send_text(CHAT, "서식 보여 줘")
    fake_telegram.wait_visible(CHAT, 1)
    fake_telegram.send_text(CHAT, "깨진 서식")
    shown = fake_telegram.wait_visible(CHAT, 2)
    assert shown[0] == "결과\n굵게, 기울임, a<b, 링크\nprint(1 < 2)"
    raw = fake_telegram.calls_of("sendMessage", CHAT)[0].params["text"]
    assert '<pre><code class="language-python">print(1 &lt; 2)</code></pre>' in raw
    assert '<a href="https://example.com/?a=1&amp;b=2">링크</a>' in raw
    assert shown[1] == broken  # shown literally, in one HTML message Telegram accepted
    calls = fake_telegram.calls_of("sendMessage", CHAT)
    assert len(calls) == 2 and all(c.params["parse_mode"] == "HTML" and not c.params.get("_failed") for c in calls)


def test_html_refused_by_telegram_is_resent_as_plain_markdown(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    bot = start_bot(**FAST, **UNLIMITED)
    answer = "**중요**: 이 답은 `서식`이 있어요."
    fake_anthropic.reply(answer)
    fake_telegram.fail_next(
        "sendMessage",
        400,
        'Bad Request: can\'t parse entities: Unsupported start tag "x" at byte offset 0',
        when=lambda p: p.get("parse_mode") == "HTML",
    )
    fake_telegram.send_text(CHAT, "질문")
    assert fake_telegram.wait_visible(CHAT) == [answer]  # the Markdown source, as plain text
    calls = fake_telegram.calls_of("sendMessage", CHAT)
    assert [c.params.get("parse_mode") for c in calls] == ["HTML", None]
    assert "parse the HTML" in bot.log


def test_10000_character_reply_with_a_long_code_block_arrives_whole_in_parts(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic
):
    bot = start_bot(**FAST, **UNLIMITED)
    code = "\n".join(f"    value_{i} = compute({i}) * 2  # 단계 {i}" for i in range(160))
    prose = "\n\n".join(f"**{i}단계**: " + "설명이 길어요 " * 80 for i in range(6))
    answer = f"{prose}\n\n```python\ndef main():\n{code}\n```\n\n끝으로 😀 정리하면 이래요."
    assert len(answer) > 10_000
    fake_anthropic.reply(Text(answer, chunk=2000))
    fake_telegram.send_text(CHAT, "아주 길게")
    fake_telegram.wait_for(lambda: any("정리하면" in s for s in fake_telegram.visible(CHAT)))
    assert bot.settle(fake_telegram) == 0  # no part comes after the last one
    calls = fake_telegram.calls_of("sendMessage", CHAT)
    assert len(calls) >= 3
    for c in calls:  # every part was accepted as HTML, within Telegram's limit
        assert c.params["parse_mode"] == "HTML" and not c.params.get("_failed")
        assert u16(parse_html(c.params["text"])[0]) <= 4096
    raws = [c.params["text"] for c in calls]
    code_parts = [r for r in raws if "value_" in r]
    assert len(code_parts) >= 2
    assert all(
        r.count('<pre><code class="language-python">') == 1 and r.count("</code></pre>") == 1 for r in code_parts
    )
    shown = "\n".join(fake_telegram.visible(CHAT))
    expected = parse_html(
        "\n\n".join(f"<b>{i}단계</b>: " + "설명이 길어요 " * 80 for i in range(6))
        + f"\n\ndef main():\n{code}\n\n끝으로 😀 정리하면 이래요."
    )[0]
    assert shown.split() == expected.split()  # nothing lost, nothing repeated
