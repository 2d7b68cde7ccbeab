"""Dates: when a stored turn was said, and which days a query talks about.

A turn's day is the calendar date written in its ``at`` (the wall clock of the conversation),
kept as an integer ``yyyymmdd``. A query's dates become ranges of such days:

- explicit: ``2023-05-08``, ``8 May 2023``, ``May 8, 2023``, ``May 2023``, ``in 2022``,
  ``2023년 5월 8일``, ``5월 8일``, ``5월`` (a month or day without a year matches it in any year);
- relative to ``now``: today, yesterday, last week / month / year, this week, ``last Saturday``,
  오늘, 어제, 그저께, 지난주, 이번 주, 지난달, 이번 달, 작년, 올해, ``지난 토요일``.

The words that made a date are returned too, so they are not also searched as words.

Whether a question asks when something happened (``asks_when``: memory.recall.rank reads it as one about what
someone told, issue 32's nineteenth round), in any of the ways English asks for a time ("When did...", "How long ago
did...", "In which month did...", "What year did..."); ``plain_when`` says those ways as "when", a query stopword, so
that "year" or "ago" is not searched for as a word of the question.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

MONTHS = {
    name: i
    for i, names in enumerate(
        (
            (),
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        )
    )
    for name in names
}
WEEKDAYS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
    "월요일": 0, "화요일": 1, "수요일": 2, "목요일": 3, "금요일": 4, "토요일": 5, "일요일": 6,
}  # fmt: skip

_M = (
    r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_Y = r"(?P<year>(?:19|20)\d\d)"
_D = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_PATTERNS = [
    re.compile(rf"\b{_Y}-(?P<mnum>[01]?\d)(?:-(?P<dnum>[0-3]?\d))?\b"),
    re.compile(rf"\b{_D}\s+(?:of\s+)?{_M}\.?,?\s+{_Y}\b"),
    re.compile(rf"\b{_M}\.?\s+{_D},?\s+{_Y}\b"),
    re.compile(rf"\b{_M}\.?,?\s+{_Y}\b"),
    re.compile(r"(?:(?P<year>(?:19|20)\d\d)\s*년\s*)?(?P<mnum>1[0-2]|0?[1-9])\s*월(?:\s*(?P<dnum>[0-3]?\d)\s*일)?"),
    re.compile(rf"\b{_D}\s+(?:of\s+)?{_M}\b"),
    re.compile(rf"\b{_M}\.?\s+{_D}\b(?!\s*(?:am|pm|:))"),
    re.compile(rf"\b(?:in|during|since|early|late|mid|of|last|this|next)\s+{_M}\b"),
    re.compile(rf"(?:\bin\s+|\bof\s+|\byear\s+){_Y}\b"),
    re.compile(rf"{_Y}\s*년"),
]
_RELATIVE = re.compile(
    r"\b(?P<en>today|tonight|yesterday|day before yesterday|(?:last|this|past) (?:week|month|year)|"
    r"last (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b|"
    r"(?P<ko>오늘|어제|그저께|그제|지난\s*주|이번\s*주|지난\s*달|이번\s*달|작년|올해|"
    r"지난\s*[월화수목금토일]요일)"
)


@dataclass(frozen=True, slots=True)
class DayRange:
    """Days ``first``..``last`` as yyyymmdd, or, with ``any_year``, month-days mmdd in every year."""

    first: int
    last: int
    any_year: bool = False

    def contains(self, day: int | None) -> bool:
        if day is None:
            return False
        if self.any_year:
            return self.first <= day % 10000 <= self.last
        return self.first <= day <= self.last


# "when", or the other ways of asking for the time of something ("How long ago did Deb go camping?", "In which month
# did Cal move?", "What year did Gi start painting?"). Twentieth round (bench/RESULTS.md): such forms of the "when"
# questions, tuning `real` @1 / @5 75.2 / 89.6 -> 80.0 / 91.2 (@10 the same), read as "when" questions
_WHEN = re.compile(
    r"\W*(?:when|since when|how long ago|how many (?:years|months|weeks|days) ago"
    r"|(?:for )?how long(?= (?:has|have|had)\b)"  # "How long has Deb been doing yoga?", not "How long was the hike?"
    r"|(?:(?:in|on|at|during) )?(?:what|which) (?:year|month|day|date|week|weekend|time|season)"
    r"(?= (?:did|does|do|was|were|is|are|will|would|has|have|had|can|could)\b))\b",  # not "What day trips..."
    re.IGNORECASE,
)


def asks_when(text: str) -> bool:
    """Whether an English question asks when something happened: "When did Deb take part in a fundraiser?", "How
    long ago did Cal move?", "In which month did Gi adopt a puppy?", "What year did Mel start painting?", "How long
    has Deb been doing yoga?", "Since when has Cal lived in Denver?"."""
    return bool(_WHEN.match(text))


def plain_when(text: str) -> str:
    """``text`` with the words asking for a time said as "when": "What year did Gi move?" -> "when did Gi move?". Not
    in Korean: "몇 월에" / "얼마 전에" said as "언제" lost three of 141 such questions at 10 (twenty-first round)."""
    m = _WHEN.match(text)
    return "when" + text[m.end() :] if m else text


def day_number(d: date) -> int:
    return d.year * 10000 + d.month * 100 + d.day


_CLOCK = r"(?P<h{n}>[012]?\d)[:.](?P<mi{n}>[0-5]\d)\s*(?P<ampm{n}>[ap]\.?m\.?)?"
_MON = r"(?P<mon>[a-z]{3,9})"
_WRITTEN_AT = [
    re.compile(
        rf"^(?:{_CLOCK.format(n=1)}\s*(?:on\s+|,\s*)?)?{date_part}"
        rf"(?:,?\s+(?:at\s+)?{_CLOCK.format(n=2)})?$"
    )
    for date_part in (
        rf"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?{_MON}\.?,?\s+(?P<year>\d{{4}})",
        rf"{_MON}\.?\s+(?P<day>[0-3]?\d)(?:st|nd|rd|th)?,?\s+(?P<year>\d{{4}})",
    )
]


def _written_at(text: str) -> datetime | None:
    """A date-time written out in English: "1:56 pm on 8 May, 2023", "May 8, 2023 1:56 PM", "8 May 2023"."""
    text = " ".join(text.lower().split())
    m = next((m for p in _WRITTEN_AT if (m := p.match(text))), None)
    if m is None:
        return None
    g = m.groupdict()
    month = MONTHS.get(g["mon"]) or MONTHS.get(g["mon"][:3])
    if month is None:
        return None
    day = int(g["day"])
    hour = int(g["h1"] or g["h2"] or 0)
    minute = int(g["mi1"] or g["mi2"] or 0)
    ampm = (g["ampm1"] or g["ampm2"] or "").replace(".", "")
    if ampm and not 1 <= hour <= 12:
        return None
    if ampm == "pm" and hour != 12:
        hour += 12
    elif ampm == "am" and hour == 12:
        hour = 0
    try:
        return datetime(int(g["year"]), month, day, hour, minute)
    except ValueError:
        return None


def parse_at(at: object) -> tuple[float | None, int | None]:
    """(epoch seconds, yyyymmdd of its own wall clock) of ``at``: ISO-8601, or written out in English
    ("1:56 pm on 8 May, 2023"), or epoch seconds; naive times count as UTC."""
    if isinstance(at, int | float) and not isinstance(at, bool) and 0 < at < 1e11:
        return float(at), day_number(datetime.fromtimestamp(at, UTC).date())
    if not isinstance(at, str) or not at.strip():
        return None, None
    try:
        dt = datetime.fromisoformat(at.strip().replace("Z", "+00:00"))
    except ValueError:
        written = _written_at(at)
        if written is None:
            return None, None
        dt = written
    day = day_number(dt.date())
    if dt.tzinfo is None:
        return calendar.timegm(dt.timetuple()) + dt.microsecond / 1e6, day
    return dt.timestamp(), day


def _month_range(year: int | None, month: int, day: int | None) -> DayRange | None:
    if not 1 <= month <= 12:
        return None
    if year is None:
        if day is not None:
            if not 1 <= day <= 31:
                return None
            return DayRange(month * 100 + day, month * 100 + day, any_year=True)
        return DayRange(month * 100 + 1, month * 100 + 31, any_year=True)
    if day is not None:
        if not 1 <= day <= calendar.monthrange(year, month)[1]:
            return None
        n = year * 10000 + month * 100 + day
        return DayRange(n, n)
    return DayRange(year * 10000 + month * 100 + 1, year * 10000 + month * 100 + 31)


def _span(first: date, last: date) -> DayRange:
    return DayRange(day_number(first), day_number(last))


def _relative(phrase: str, today: date) -> DayRange | None:
    p = re.sub(r"\s+", " ", phrase.lower())
    monday = today - timedelta(days=today.weekday())
    if p in ("today", "tonight", "오늘"):
        return _span(today, today)
    if p in ("yesterday", "어제"):
        d = today - timedelta(days=1)
        return _span(d, d)
    if p in ("day before yesterday", "그저께", "그제"):
        d = today - timedelta(days=2)
        return _span(d, d)
    if p in ("last week", "지난 주", "지난주"):
        return _span(monday - timedelta(days=7), monday - timedelta(days=1))
    if p in ("past week",):
        return _span(today - timedelta(days=7), today)
    if p in ("this week", "이번 주", "이번주"):
        return _span(monday, today)
    first_of_month = today.replace(day=1)
    if p in ("last month", "지난 달", "지난달"):
        prev_last = first_of_month - timedelta(days=1)
        return _span(prev_last.replace(day=1), prev_last)
    if p in ("past month",):
        return _span(today - timedelta(days=31), today)
    if p in ("this month", "이번 달", "이번달"):
        return _span(first_of_month, today)
    if p in ("last year", "작년", "past year"):
        return _span(date(today.year - 1, 1, 1), date(today.year - 1, 12, 31))
    if p in ("this year", "올해"):
        return _span(date(today.year, 1, 1), today)
    name = p.split(" ", 1)[-1].replace(" ", "")
    if name in WEEKDAYS:  # last saturday / 지난 토요일: the latest such day before today
        back = (today.weekday() - WEEKDAYS[name]) % 7 or 7
        d = today - timedelta(days=back)
        return _span(d, d)
    return None


def query_dates(text: str, today: date | None) -> tuple[list[DayRange], str]:
    """The day ranges a query mentions, and the (lower-cased) query with those date words removed."""
    ranges: list[DayRange] = []
    lowered = text.lower()
    rest = lowered
    spans: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in spans)

    for pattern in _PATTERNS:
        for m in pattern.finditer(lowered):
            if not free(m.start(), m.end()):
                continue
            groups = m.groupdict()
            year = int(groups["year"]) if groups.get("year") else None
            if groups.get("mon"):
                month: int | None = MONTHS[groups["mon"].rstrip(".")[:3] if groups["mon"] != "sept" else "sep"]
            elif groups.get("mnum"):
                month = int(groups["mnum"])
            else:
                month = None
            day_text = groups.get("day") or groups.get("dnum")
            day = int(day_text) if day_text else None
            if month is None:
                if year is None:
                    continue
                r: DayRange | None = DayRange(year * 10000 + 101, year * 10000 + 1231)
            else:
                r = _month_range(year, month, day)
            if r is not None:
                ranges.append(r)
                spans.append((m.start(), m.end()))
    if today is not None:
        for m in _RELATIVE.finditer(lowered):
            if not free(m.start(), m.end()):
                continue
            r = _relative(m.group(0), today)
            if r is not None:
                ranges.append(r)
                spans.append((m.start(), m.end()))
    for s, e in sorted(spans, reverse=True):
        rest = rest[:s] + " " + rest[e:]
    return ranges, rest
