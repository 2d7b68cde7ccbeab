"""The service core: ``Assistant.ask()`` and its tool loop, prompt building, upkeep, limits and access policy.

Front ends (bot/tg, bot/cli) call ``bot.core.ask``; it reads and writes memory (memory/) and talks
to Claude through the model interface (bot/claude/). Nothing here imports a front end.
"""
