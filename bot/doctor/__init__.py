"""``python -m bot doctor``: is everything in place for a start? One line per finding.

Each check is a small function registered with ``@check(name)`` (see bot/doctor/checks.py
and bot/doctor/net.py); it gets a ``Context`` and yields ``Result`` lines:

    ok       settings: TELEGRAM_BOT_TOKEN and ANTHROPIC_API_KEY are set and well-formed
    note     transcripts: 4242.jsonl ends in a torn line (a write cut by a crash): harmless, …
    problem  data dir: /srv/data is readable by others (mode 0755): chmod 700 /srv/data

``problem`` lines say what to do; any problem makes the exit status 1. ``note`` lines are
harmless findings, ``skip`` lines checks that could not run here (e.g. ``--offline``).
Output never contains a secret: every line is scrubbed of the token, the keys and the
webhook secret before it is printed, whatever a check wrote.

Adding a check (e.g. for a new kind of file) is a function in a checks module::

    @check("facts")
    def facts(ctx: Context) -> Iterator[Result]:
        yield ok("facts", "…")
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TextIO

from bot.config import ConfigError, Settings, load_settings
from bot.doctor.base import CHECKS, PROBLEM, Check, Context, Result, check, note, ok, problem, skip  # noqa: F401


def registered() -> list[Check]:
    """All checks (importing the modules that register them)."""
    import bot.doctor.checks  # noqa: F401
    import bot.doctor.files  # noqa: F401
    import bot.doctor.model  # noqa: F401
    import bot.doctor.net  # noqa: F401
    import bot.doctor.owner  # noqa: F401
    import bot.doctor.web  # noqa: F401

    return list(CHECKS)


def secrets(env: Mapping[str, str]) -> list[str]:
    """The values that must never be printed, longest first."""
    token = env.get("TELEGRAM_BOT_TOKEN", "").strip()
    values = [
        token,
        token.partition(":")[2],
        env.get("ANTHROPIC_API_KEY", "").strip(),
        env.get("WEBHOOK_SECRET", "").strip(),
    ]
    return sorted({v for v in values if len(v) >= 4}, key=len, reverse=True)


def scrub(text: str, hidden: Iterable[str]) -> str:
    for value in hidden:
        text = text.replace(value, "[hidden]")
    return text


def run_checks(ctx: Context, checks: Iterable[Check]) -> Iterator[Result]:
    """Run ``checks`` in order; a check that crashes is reported as a problem, never raised."""
    for c in checks:
        if c.network and ctx.offline:
            yield skip(c.name, "skipped (--offline)")
            continue
        try:
            results = list(c.run(ctx))
        except Exception as e:  # a broken check must not hide the others
            results = [problem(c.name, f"the check itself failed ({type(e).__name__}): please report this")]
        yield from results


def make_context(
    env: Mapping[str, str], *, data_dir: str | None = None, offline: bool = False, timeout: float = 15.0
) -> Context:
    settings: Settings | None = None
    error: str | None = None
    # the keys are checked on their own (bot/doctor/checks.py): stand-ins let the other settings be validated
    stand_ins = {n: env.get(n, "").strip() or "missing" for n in ("TELEGRAM_BOT_TOKEN", "ANTHROPIC_API_KEY")}
    try:
        settings = load_settings({**env, **stand_ins}, dotenv=False)
    except ConfigError as e:
        error = str(e)
    raw_dir = data_dir or env.get("DATA_DIR", "").strip() or "data"
    return Context(
        env=env,
        settings=settings,
        config_error=error,
        data_dir=Path(raw_dir).expanduser(),
        offline=offline,
        timeout=timeout,
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="./bot.sh doctor",
        description="Check what a start needs: settings, the data directory and its files, and (unless "
        "--offline) Telegram and Anthropic. One line per finding; exit 0 when all is well, 1 otherwise. "
        "Never prints a secret.",
    )
    parser.add_argument("--offline", action="store_true", help="skip the checks that use the network")
    parser.add_argument("--data-dir", metavar="DIR", help="check this data directory (default: $DATA_DIR or ./data)")
    parser.add_argument(
        "--only",
        metavar="NAMES",
        help="run only these checks (comma-separated), e.g. --only heartbeat for a container health check",
    )
    parser.add_argument("--timeout", type=float, default=15.0, help="seconds for each network call (default 15)")
    parser.add_argument(
        "--max-age",
        type=float,
        default=90.0,
        help="heartbeat: the longest time in seconds since the bot last reached Telegram (default 90)",
    )
    parser.add_argument(
        "--terminal",
        action="store_true",
        help="check only what the terminal chat (./bot.sh chat) needs: no Telegram token, no Telegram check",
    )
    parser.add_argument("--list", action="store_true", help="list the checks and exit")
    return parser


def main(argv: list[str] | None = None, *, out: TextIO | None = None, env: Mapping[str, str] | None = None) -> int:
    out = out or sys.stdout
    try:
        args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 0
    checks = registered()
    if args.list:
        for c in checks:
            flags = [f for f, on in (("network", c.network), ("only on request", not c.default)) if on]
            out.write(f"{c.name}{' (' + ', '.join(flags) + ')' if flags else ''}\n")
        return 0
    if env is None:
        from dotenv import load_dotenv

        load_dotenv(Path.cwd() / ".env", override=False)
        env = dict(os.environ)
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in {c.name for c in checks}]
        if unknown:
            out.write(f"unknown check {unknown[0]!r}: one of {', '.join(c.name for c in checks)}\n")
            return 2
        checks = [c for c in checks if c.name in wanted]
    else:
        checks = [c for c in checks if c.default]
    ctx = make_context(env, data_dir=args.data_dir, offline=args.offline, timeout=args.timeout)
    ctx.heartbeat_max_age = args.max_age
    ctx.terminal = args.terminal
    hidden = secrets(env)
    problems = 0
    for result in run_checks(ctx, checks):
        problems += result.status == PROBLEM
        out.write(scrub(result.line(), hidden) + "\n")
        out.flush()
    if not args.only:
        out.write(
            scrub(f"{'all well' if not problems else f'{problems} problem(s)'}: data in {ctx.data_dir}\n", hidden)
        )
    return 1 if problems else 0
