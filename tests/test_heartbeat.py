"""The heartbeat file of a long-polling bot, read by ``python -m bot doctor --only heartbeat``."""

import io
import os

from bot import doctor
from bot.tg.heartbeat import PollingHeartbeatRequest
from tests.fakes.telegram_server import FakeTelegram


def test_polling_bot_beats_and_the_health_check_reads_it(start_bot, fake_telegram: FakeTelegram, tmp_path, data_dir):
    beat = tmp_path / "heartbeat"
    fake_telegram.idle_poll = 0.2  # no update comes: the bot's first poll is answered (empty) after 0.2 s
    bot = start_bot(HEARTBEAT_FILE=str(beat))
    fake_telegram.wait_for(beat.exists, timeout=30)  # an answered poll, even with no update, is a beat
    assert oct(os.stat(beat).st_mode & 0o777) == "0o600"
    out = io.StringIO()
    env = {"HEARTBEAT_FILE": str(beat), "DATA_DIR": str(data_dir)}
    assert doctor.main(["--only", "heartbeat"], out=out, env=env) == 0, out.getvalue()
    assert bot.stop() == 0
    # a beat older than --max-age: the bot no longer reaches Telegram
    old = beat.stat().st_mtime - 300
    os.utime(beat, (old, old))
    out = io.StringIO()
    assert doctor.main(["--only", "heartbeat", "--max-age", "90"], out=out, env=env) == 1
    assert "does not reach Telegram" in out.getvalue()


async def test_only_answered_polls_beat(fake_telegram: FakeTelegram, tmp_path):
    beat = tmp_path / "heartbeat"
    request = PollingHeartbeatRequest(beat)
    await request.initialize()
    url = f"{fake_telegram.base_url}{fake_telegram.token}"
    try:
        fake_telegram.fail_next("getUpdates", 502, "Bad Gateway")
        code, _ = await request.do_request(f"{url}/getUpdates", "POST")
        assert code == 502 and not beat.exists()
        code, _ = await request.do_request(f"{url}/getMe", "POST")
        assert code == 200 and not beat.exists()  # only getUpdates counts
        code, _ = await request.do_request(f"{url}/getUpdates", "POST")
        assert code == 200 and beat.exists()
    finally:
        await request.shutdown()
