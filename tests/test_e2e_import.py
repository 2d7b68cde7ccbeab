"""End to end: history imported from the phone (/import) and from the command line, then found by the
automatic recall of the real bot process with the date it was said; /export gives it back."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from tests.conftest import TEST_OWNER
from tests.export_samples import gpt_conversation, gpt_message, tg_chat
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.telegram_server import FakeTelegram

FAST = {"STREAM_INTERVAL": "0.1", "TELEGRAM_RATE_FACTOR": "20"}
MEMBER = 77  # let in, not the owner
LAST_YEAR = (int(time.time()) // 86400 - 400) * 86400 + 3 * 3600  # 400 days ago, 03:00 UTC (noon in Seoul)


def last_year_export() -> bytes:
    t = LAST_YEAR
    conv = gpt_conversation("c-bike", "Bike", [
        ("root", None, None),
        ("u1", "root", gpt_message("m-u1", "user", ["My bike lock code is 4-7-1-9, the blue Brompton"], t + 10)),
        ("a1", "u1", gpt_message("m-a1", "assistant", ["Noted: blue Brompton, lock code 4719."], t + 20)),
    ], current="a1", t=t)  # fmt: skip
    return json.dumps([conv]).encode()


def said_in_seoul(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).astimezone(ZoneInfo("Asia/Seoul")).strftime("%Y-%m-%d")


def ask(tg: FakeTelegram, text: str | None = None, chat: int = TEST_OWNER, send=None, **kw) -> str:
    before = len(tg.visible(chat))
    send() if send is not None else tg.send_text(chat, text or "", **kw)
    return tg.wait_visible(chat, before + 1)[before]


def test_owner_imports_last_years_chatgpt_and_recall_answers_with_its_date(
    start_bot, fake_telegram: FakeTelegram, fake_anthropic: FakeAnthropic, data_dir
):
    tg = fake_telegram
    start_bot(**FAST)
    export = last_year_export()

    def send_export(file_id: str = "exp-1", data: bytes = export, **kw) -> None:
        tg.send_document(TEST_OWNER, file_id, data, "conversations.json", "application/json", caption="/import", **kw)

    answer = ask(tg, send=send_export)
    day = datetime.fromtimestamp(LAST_YEAR, UTC).strftime("%Y-%m-%d")
    assert f"ChatGPT에서 가져왔어요: 대화 1개, 메시지 2개 ({day} ~ {day})" in answer
    assert fake_anthropic.requests == []  # an import is not a question
    assert "새로 가져올 것이 없어요: 메시지 2개" in ask(tg, send=lambda: send_export("exp-2"))  # again: nothing new

    fake_anthropic.reply("4719예요.")
    assert ask(tg, "What was the lock code of my Brompton bike?") == "4719예요."
    request = fake_anthropic.requests[-1]
    # where the related-memories block sits is the prompt's business (the trust-boundaries work moves it
    # from the per-turn system message into the user turn): here, that it is there with its date
    sent = json.dumps(request["messages"], ensure_ascii=False)
    assert "[관련 기억 / Related memories]" in sent
    assert f"{said_in_seoul(LAST_YEAR + 10)} 12:00 user: My bike lock code is 4-7-1-9" in sent
    assert "4-7-1-9" not in json.dumps(request["system"])  # imported text never in the system prompt
    live = [json.loads(x) for x in (data_dir / "chats" / f"{TEST_OWNER}.jsonl").read_text().splitlines()]
    assert "4-7-1-9" not in json.dumps(live)  # never written into the live transcript

    tg.send_text(TEST_OWNER, "/export md")
    (name, data), *_ = tg.wait_for(lambda: tg.documents(TEST_OWNER))
    text = data.decode()
    assert name.endswith(".md") and f"## Imported from ChatGPT · {day}" in text
    assert text.index("My bike lock code") < text.index("## Current conversation") < text.index("4719예요.")


def test_only_the_owner_imports_nothing_is_downloaded_first_and_bad_files_get_one_line(
    start_bot, fake_telegram: FakeTelegram, data_dir
):
    tg = fake_telegram
    start_bot(**FAST)
    export = last_year_export()
    refused = ask(tg, chat=MEMBER, send=lambda: tg.send_document(
        MEMBER, "member-exp", export, "conversations.json", "application/json", caption="/import"))  # fmt: skip
    assert "주인만" in refused
    too_big = ask(tg, send=lambda: tg.send_document(
        TEST_OWNER, "big-exp", None, "export.zip", "application/zip", caption="/import", size=25_000_000,
        language_code="en"))  # fmt: skip
    assert "25 MB" in too_big and "python -m bot import" in too_big
    assert [c.params["file_id"] for c in tg.calls_of("getFile")] == []  # neither was downloaded

    broken = ask(tg, send=lambda: tg.send_document(
        TEST_OWNER, "bad-exp", export[:-40], "conversations.json", "application/json", caption="/import",
        language_code="en"))  # fmt: skip
    assert broken.startswith("⚠️ conversations.json: the file is cut short") and "Nothing was imported." in broken
    assert not (data_dir / "chats" / "archive").exists() or not list((data_dir / "chats" / "archive").iterdir())
    how = ask(tg, "/import", language_code="en")
    assert "with the caption /import" in how


def test_command_line_import_then_search_finds_it(tmp_path, data_dir, bot_env):
    export = tmp_path / "result.json"
    export.write_text(json.dumps(tg_chat(chat_id=99, name="Family")), encoding="utf-8")
    env = {**bot_env, "DATA_DIR": str(data_dir), "OWNER_ID": str(TEST_OWNER)}
    run = [sys.executable, "-m", "bot", "import", str(export)]
    done = subprocess.run(run, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "메시지 4개" in done.stdout or "4 messages" in done.stdout
    again = subprocess.run(run, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert "메시지 4개는 이미" in again.stdout or "4 messages in it were imported before" in again.stdout
    search = [sys.executable, "-m", "bot", "search", "--chat", str(TEST_OWNER), "kimchi"]
    found = subprocess.run(search, env=env, capture_output=True, text=True, timeout=120, check=True)
    hit = json.loads(found.stdout.splitlines()[0])
    assert hit["content"] == "Minsu: I'll bring the kimchi" and hit["at"].startswith("2023-11-14")
    bad = tmp_path / "notes.json"
    bad.write_text('{"todo": []}')
    failed = subprocess.run([*run[:-1], str(bad)], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert failed.returncode == 1
    assert "notes.json: not a ChatGPT, Claude or Telegram export" in failed.stderr
