"""The usage lines of /stats (a chat, today and in total), the owner's /stats all (per person) and the
terminal's /stats (this conversation, today and this month at the keyboard).

Read from the ledger (memory/usage.py), priced with bot/claude/pricing.py: a model without a price is
named as "price unknown" instead of being guessed.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.claude.pricing import PriceTable
from bot.core.limits import TERMINAL, Limits
from bot.texts import t
from memory.usage import Tally


def number(value: int) -> str:
    return f"{value:,}"


def dollars(value: float) -> str:
    """``$0.0123`` under a dollar (cents would hide a day of chatting), ``$12.34`` above."""
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def cost_of(tally: Tally, prices: PriceTable) -> tuple[float, list[str]]:
    """(USD of the priced models and the web searches, names of the models without a price)."""
    total, unknown = prices.search_cost(tally.searches), []
    for model, row in sorted(tally.models.items()):
        cost = prices.cost(model, *row[:4])
        if cost is None:
            if any(row[:4]):
                unknown.append(model)
        else:
            total += cost
    return total, unknown


def cost_text(tally: Tally, prices: PriceTable, lang: str) -> str:
    total, unknown = cost_of(tally, prices)
    if not unknown:
        return dollars(total)
    models = ", ".join(unknown)
    if total == 0:
        return t("cost.unknown", lang, models=models)
    return t("cost.partial", lang, cost=dollars(total), models=models)


def tokens_text(tally: Tally, lang: str) -> str:
    tokens = tally.tokens()
    text = t("stats.tokens", lang, **{k: number(v) for k, v in tokens.items() if k != "calls"})
    return text + t("stats.searches", lang, n=number(tally.searches)) if tally.searches else text


def chat_usage_text(limits: Limits, prices: PriceTable, chat_id: int | str, lang: str) -> str:
    """The chat's questions, tokens and estimated cost, today and in total (every model call it caused)."""
    ledger = limits.ledger
    today, total = ledger.chat_day(str(chat_id), limits.day()), ledger.chat_total(str(chat_id))
    return t(
        "stats.usage",
        lang,
        q_today=number(today.questions),
        tokens_today=tokens_text(today, lang),
        cost_today=cost_text(today, prices, lang),
        q_total=number(total.questions),
        tokens_total=tokens_text(total, lang),
        cost_total=cost_text(total, prices, lang),
    )


def terminal_usage_text(limits: Limits, prices: PriceTable, chat_id: int | str, lang: str) -> str:
    """The terminal's /stats: this conversation (in total), and everything asked at the keyboard today
    and this month, with the estimated cost (every model call: answers, tools and summaries)."""
    ledger = limits.ledger
    day = limits.day()
    rows = [
        ("stats.chat", ledger.chat_total(str(chat_id))),
        ("stats.today", ledger.user_day(TERMINAL, day)),
        ("stats.month", ledger.user_month(TERMINAL, day[:7])),
    ]
    lines = [t("stats.terminal_header", lang)]
    for key, tally in rows:
        line = t(key, lang, chat=chat_id, q=number(tally.questions), tokens=tokens_text(tally, lang))
        lines.append(f"{line} → {cost_text(tally, prices, lang)}")
    return "\n".join(lines)


class TerminalUsage:
    """The usage of the owner at the keyboard: counts the terminal's questions and answers its /stats."""

    def __init__(self, limits: Limits, prices: PriceTable) -> None:
        self.limits = limits
        self.prices = prices

    def question(self, chat_id: int | str) -> None:
        """Count a question asked in the terminal (never limited). Cheap: in memory."""
        self.limits.admit(None, chat_id, exempt=True, hold=False)

    def text(self, chat_id: int | str, lang: str) -> str:
        """The /stats text, with what the Telegram bot recorded meanwhile (reads the ledger's file)."""
        self.limits.ledger.refresh()
        return terminal_usage_text(self.limits, self.prices, chat_id, lang)


def all_users_text(limits: Limits, prices: PriceTable, label: Callable[[str], str], lang: str) -> str:
    """Per person: today and in total, the most expensive first; then the sums and the limits."""
    ledger = limits.ledger
    day = limits.day()
    rows = []
    sum_today = sum_total = 0.0
    for user in ledger.users():
        today, total = ledger.user_day(user, day), ledger.user_total(user)
        cost_today, cost_total = cost_of(today, prices)[0], cost_of(total, prices)[0]
        sum_today += cost_today
        sum_total += cost_total
        who = t("stats.terminal", lang) if user == TERMINAL else label(user)
        line = t(
            "stats.all_line",
            lang,
            who=who,
            q_today=number(today.questions),
            t_today=number(today.total_tokens()),
            cost_today=cost_text(today, prices, lang),
            q_total=number(total.questions),
            t_total=number(total.total_tokens()),
            cost_total=cost_text(total, prices, lang),
        )
        rows.append((cost_total, total.total_tokens(), line))
    if not rows:
        return t("stats.all_empty", lang)
    rows.sort(key=lambda r: (r[0], r[1]), reverse=True)
    unlimited = t("stats.unlimited", lang)
    return "\n".join(
        [
            t("stats.all_header", lang),
            *(line for _, _, line in rows),
            t("stats.all_sum", lang, cost_today=dollars(sum_today), cost_total=dollars(sum_total)),
            t(
                "stats.limits",
                lang,
                messages=number(limits.messages) if limits.messages else unlimited,
                tokens=number(limits.tokens) if limits.tokens else unlimited,
            ),
        ]
    )
