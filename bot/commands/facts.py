"""/memory, /remember and /forget: the user's view of the chat's facts, shared by Telegram and the terminal.

Each function does the work (file I/O: call it off the event loop) and returns the
reply text in the user's language; bad input gets a clear text, never an exception.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from bot.core.ask import Assistant, ChatId
from bot.texts import t
from bot.tools.facts import TERMINAL
from memory.facts import Fact, FactError, FactFileError


def _fact_error(e: FactError | FactFileError, lang: str, fact_id: str = "") -> str:
    if isinstance(e, FactFileError):
        return t("fact.unreadable", lang)
    if e.code == "unknown_id":
        return t("forget.unknown", lang, id=fact_id)
    return t(f"fact.{e.code}", lang, limit=e.limit)


def origin_text(fact: Fact, chat_id: ChatId, lang: str) -> str:
    """Who added a fact and how, as /memory shows it: ``Minji · /remember``, ``Claude, asked by you, from a
    document``, ``…, after reading the web — kma.go.kr``, or that it was not recorded (facts from before
    provenance was kept)."""
    by = fact.by
    if by is None or not fact.via:
        return t("memory.by_unknown", lang)
    if by == TERMINAL:
        who = t("memory.who.terminal", lang)
    elif str(by) == str(chat_id):  # a private chat: the person reading is the one who added it
        who = t("memory.who.you", lang)
    else:
        who = str(fact.source.get("name") or by)
    text = t(f"memory.by_{fact.via}", lang, who=who)
    carried = fact.source.get("from")
    if carried in ("document", "photo", "forwarded"):
        text += f", {t('memory.from', lang, what=t(f'memory.from.{carried}', lang))}"
    if fact.web is not None:  # saved after a web search or fetch came back: what web pages say is data
        hosts = page_hosts(fact.web)
        text += ", " + (t("memory.web_pages", lang, pages=" · ".join(hosts)) if hosts else t("memory.web", lang))
    return text


def page_hosts(urls: tuple[str, ...], limit: int = 3) -> list[str]:
    """The first ``limit`` distinct sites of ``urls`` (``news.example.kr``), as /memory names them."""
    out: list[str] = []
    for url in urls:
        host = (urlsplit(url).hostname or "").removeprefix("www.")
        if host and host not in out:
            out.append(host)
    return out[:limit]


def memory_text(assistant: Assistant, chat_id: ChatId, lang: str) -> str:
    """/memory: the facts, numbered by their ids, each with who added it and how."""
    facts = assistant.list_facts(chat_id)
    if not facts:
        return t("memory.empty", lang)
    lines = [t("memory.header", lang, n=len(facts))]
    lines += [f"{f.id}. {f.text} ({origin_text(f, chat_id, lang)})" for f in facts]
    lines += ["", t("memory.footer", lang)]
    return "\n".join(lines)


def remember_text(
    assistant: Assistant, chat_id: ChatId, argument: str, lang: str, *, by: int | None = None, name: str | None = None
) -> str:
    """/remember <text>: add one fact, recorded with who added it (``by``: a user id; None: the terminal)."""
    if not argument.strip():
        return t("remember.usage", lang)
    try:
        change = assistant.remember(chat_id, argument, by=by, name=name)
    except (FactError, FactFileError) as e:
        return _fact_error(e, lang)
    key = "remember.known" if change.unchanged else "remember.done"
    return t(key, lang, id=change.fact.id, text=change.fact.text)


def forget_text(assistant: Assistant, chat_id: ChatId, argument: str, lang: str) -> str:
    """/forget <id> removes one fact; /forget all archives them all (renamed, never deleted)."""
    arg = argument.strip().lstrip("#")
    if not arg:
        return t("forget.usage", lang)
    if arg.lower() in ("all", "전부", "모두"):
        n = len(assistant.list_facts(chat_id))
        path = assistant.forget_all(chat_id)
        if path is None or n == 0:
            return t("forget.all_empty", lang)
        return t("forget.all", lang, n=n, name=path.name)
    try:
        fact = assistant.forget(chat_id, arg)
    except (FactError, FactFileError) as e:
        return _fact_error(e, lang, arg)
    return t("forget.done", lang, id=fact.id, text=fact.text)
