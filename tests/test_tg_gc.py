"""The bot's start takes what is loaded out of the garbage collector's view (``gc.freeze`` in bot/tg/app.py's
``post_init``): a full collection in a busy minute then walks only what the bot made since."""

import asyncio
import gc

from tests.helpers import app_settings


async def test_the_start_freezes_what_is_loaded(fake_telegram, fake_anthropic, data_dir):
    from bot.tg.app import build_application
    from bot.wiring import make_assistant

    settings = app_settings(fake_telegram, fake_anthropic, data_dir)
    assistant = make_assistant(settings)
    app = build_application(settings, assistant)
    gc.unfreeze()  # nothing frozen in this process before the start
    assert gc.get_freeze_count() == 0
    try:
        await app.post_init(app)
        # the test process's own objects and the bot's: far more than a handful
        assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()
        task = app.bot_data.get("menu_task")
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await assistant.aclose()
