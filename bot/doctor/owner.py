"""The access and cost checks of ``python -m bot doctor``: who owns the bot, access.json, usage.json.

Read only, like every check: nothing is written to the data directory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from bot.doctor.base import Context, Result, check, note, ok, problem
from memory.access import FILE_NAME as ACCESS_FILE
from memory.access import AccessFileError, AccessStore
from memory.usage import FILE_NAME as USAGE_FILE


@check("access")
def access_check(ctx: Context) -> Iterator[Result]:
    """The owner (configured or paired), the people and groups let in, and the daily limits."""
    try:
        store = AccessStore(ctx.data_dir).load()
    except AccessFileError as e:
        yield problem("access", f"{e} (the bot does not start with it)")
        return
    except OSError as e:
        yield problem("access", f"{ctx.data_dir / ACCESS_FILE} cannot be read: {e}")
        return
    s = ctx.settings
    configured = s.owner_id if s else None
    owner = configured if configured is not None else store.owner
    people = len(store.users()) + len((s.allowed_users if s else frozenset()) - {owner})
    groups = len(store.groups())
    if owner is None:
        who = "no owner yet: the bot writes a pairing code to its log at start; send /start <code> to it"
    else:
        how = "OWNER_ID or ALLOWED_USERS" if configured is not None else "paired"
        who = f"owner {owner} ({how})"
    limits = ""
    if s:
        messages = f"{s.daily_message_limit:,} questions" if s.daily_message_limit else "no question limit"
        tokens = f"{s.daily_token_limit:,} tokens" if s.daily_token_limit else "no token limit"
        limits = f"; daily limits: {messages}, {tokens}"
    yield ok("access", f"{who}; {people} more {'person' if people == 1 else 'people'}, {groups} open "
             f"group{'' if groups == 1 else 's'}{limits}")  # fmt: skip
    path = ctx.data_dir / USAGE_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return
    except OSError as e:
        yield problem("access", f"{path} cannot be read: {e}")
        return
    try:
        json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        yield note("access", f"{USAGE_FILE} is not valid JSON: the bot moves it aside and counts usage afresh")
