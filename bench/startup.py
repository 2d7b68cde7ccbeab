"""Start-up: how soon the terminal chat shows its prompt and the bot polls Telegram.

- terminal: ``python -m bot chat`` on a pseudo-terminal (``TERM=xterm-256color``, 80x24, so answers
  are rendered); the time from spawning the process to the prompt ``> `` on the screen, then
  ``/quit`` and the time to exit;
- terminal: the first answer, a question typed the moment the prompt appears, against the fake
  Anthropic server (answering at once, in Markdown with a code block): the time from typing it to
  the prompt coming back after the rendered answer (the renderer is still being imported in the
  background then: the worst case of lazy imports);
- bot: ``python -m bot`` against the fake Telegram and Anthropic servers on 127.0.0.1; the time
  from spawning the process to its first ``getUpdates`` call arriving at the fake;
- bot: the time to its first answer, the question waiting when it first polls (the fake model
  answers at once);
- terminal: the first answer in a fresh process, the question on a pipe (``echo q | python -m bot
  chat``): the time from spawning the process to the answer on stdout, against the fake Anthropic
  answering at once (goal: 0.5 s). Nothing can overlap an import here: no one is typing;
- for reference, the time a bare ``python -c pass`` takes (the interpreter's own start, the floor
  of every row; it grows with the machine's load);
- with ``--env``: the runtime-only environment ``./bot.sh`` makes on first use (a fresh venv with
  ``pip install -e .``, no development extras): its install time and size on disk (pip's cache is
  whatever this machine has: warm after the first run).

Medians of ``--runs`` runs. Targets: prompt within 0.5 s, first getUpdates within 1.5 s.
``--baseline DIR`` measures another checkout (e.g. an older commit) in the same run, side by side; the two
take turns, so a load that changes meanwhile weighs on both alike.

    python -m bench.startup [--runs 5] [--baseline /path/to/other/checkout] [--env]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

from tests.fakes.anthropic_server import FakeAnthropic, Text
from tests.fakes.telegram_server import FakeTelegram

ROOT = Path(__file__).resolve().parent.parent


def base_env(data: Path, root: Path = ROOT) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL")}
    return {**keep, "PYTHONPATH": str(root), "ANTHROPIC_API_KEY": "sk-ant-bench-0123456789", "DATA_DIR": str(data)}


ANSWER = "**민수**님, 이렇게 해요:\n\n```python\nprint('안녕')\n```\n\n- 하나\n- 둘\n"


def terminal_env(data: Path, root: Path, **extra: str) -> dict[str, str]:
    return {**base_env(data, root), "TERM": "xterm-256color", **extra}


def open_terminal() -> tuple[int, int]:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    return master, slave


def read_until(master: int, seen: bytearray, done: object, what: str) -> None:
    while not done(bytes(seen)):  # type: ignore[operator]
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            raise RuntimeError(f"no {what}; screen: {bytes(seen)!r}")
        seen += os.read(master, 4096)


def terminal_answer_once(data: Path, root: Path = ROOT) -> float:
    """Seconds from typing the first question at the prompt to the prompt after its rendered answer."""
    with FakeAnthropic() as anthropic:
        anthropic.default = lambda body: Text(ANSWER)
        master, slave = open_terminal()
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "chat"], stdin=slave, stdout=slave, stderr=slave, cwd=root,
            env=terminal_env(data, root, ANTHROPIC_BASE_URL=anthropic.url),
        )  # fmt: skip
        os.close(slave)
        seen = bytearray()
        try:
            read_until(master, seen, lambda s: s.count(b"> ") >= 1, "prompt")
            os.write(master, "보여줘\r".encode())
            t0 = time.monotonic()
            read_until(master, seen, lambda s: s.count(b"> ") >= 2, "answer")
            took = time.monotonic() - t0
            if "이렇게 해요".encode() not in seen:
                raise RuntimeError(f"no answer; screen: {bytes(seen)!r}")
            os.write(master, b"\x04")
            proc.wait(30)
            return took
        finally:
            if proc.poll() is None:
                proc.kill()
            os.close(master)


def pipe_answer_once(data: Path, root: Path = ROOT) -> float:
    """Seconds from spawning ``python -m bot chat`` with a question on its stdin to the answer on stdout."""
    with FakeAnthropic() as anthropic:
        anthropic.default = lambda body: Text(ANSWER)
        t0 = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "chat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, cwd=root, env={**base_env(data, root), "ANTHROPIC_BASE_URL": anthropic.url},
        )  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write("보여줘\n".encode())
            proc.stdin.flush()
            seen = bytearray()
            while "이렇게 해요".encode() not in seen:
                chunk = proc.stdout.read1(4096)
                if not chunk:
                    raise RuntimeError(f"no answer; stdout: {bytes(seen)!r}")
                seen += chunk
            took = time.monotonic() - t0
            proc.stdin.close()
            proc.wait(30)
            return took
        finally:
            if proc.poll() is None:
                proc.kill()


def runtime_env(root: Path = ROOT) -> tuple[float, float]:
    """(seconds to create a venv and install the runtime dependencies as ./bot.sh does, its size in MB)."""
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv"
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, "--upgrade", "pip"], check=True)
        subprocess.run([*pip, "-e", str(root)], check=True)
        took = time.monotonic() - t0
        size = sum(f.stat().st_size for f in venv.rglob("*") if f.is_file() and not f.is_symlink())
        return took, size / 1e6


def terminal_once(data: Path, root: Path = ROOT) -> tuple[float, float]:
    """(seconds to the prompt, seconds to exit after /quit was typed at it)."""
    master, slave = open_terminal()
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "chat"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=terminal_env(data, root),
        cwd=root,
    )
    os.close(slave)
    seen = b""
    prompt_at = None
    try:
        while prompt_at is None:
            ready, _, _ = select.select([master], [], [], 30)
            if not ready:
                raise RuntimeError(f"no prompt; screen: {seen!r}")
            seen += os.read(master, 4096)
            if seen.rstrip(b"\r\n").endswith(b">") or b"\n> " in seen or seen.endswith(b"> "):
                prompt_at = time.monotonic() - t0
        os.write(master, b"/quit\n")
        quit_at = time.monotonic()
        while proc.poll() is None:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    os.read(master, 4096)
                except OSError:
                    break
        proc.wait(30)
        return prompt_at, time.monotonic() - quit_at
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)


def bot_once(data: Path, root: Path = ROOT) -> tuple[float, float]:
    """Seconds from spawning ``python -m bot`` to its first getUpdates, and to its first answer.

    The question is waiting at the fake Telegram when the bot first polls (as after a restart);
    the fake model answers at once, so the second figure is the bot's own time to be ready.
    """
    with FakeTelegram() as telegram, FakeAnthropic() as anthropic:
        env = {
            **base_env(data, root),
            "TELEGRAM_BOT_TOKEN": telegram.token,
            "TELEGRAM_BASE_URL": telegram.base_url,
            "ANTHROPIC_BASE_URL": anthropic.url,
            "OWNER_ID": "1",
        }
        t0 = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot"], env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            calls = telegram.wait_for(lambda: telegram.calls_of("getUpdates"), timeout=60)
            telegram.send_text(1, "안녕")
            telegram.wait_sent(1)
            answer = next(c for c in telegram.calls_of("sendMessage", 1) if not c.params.get("_failed"))
            return calls[0].at - t0, answer.at - t0
        finally:
            proc.terminate()
            proc.wait(30)


def bare_python() -> float:
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True, env=base_env(Path(".")))
    return time.monotonic() - t0


def one_run(root: Path) -> tuple[float, float, float, float, float, float]:
    """(start to prompt, /quit to exit, start to first getUpdates, start to first answer, first terminal answer,
    start to the first answer on a pipe), once."""
    with tempfile.TemporaryDirectory() as tmp:
        prompt, quit_ = terminal_once(Path(tmp), root)
    with tempfile.TemporaryDirectory() as tmp:
        first = terminal_answer_once(Path(tmp), root)
    with tempfile.TemporaryDirectory() as tmp:
        pipe = pipe_answer_once(Path(tmp), root)
    with tempfile.TemporaryDirectory() as tmp:
        poll, answer = bot_once(Path(tmp), root)
    return prompt, quit_, poll, answer, first, pipe


def measure(roots: list[Path], runs: int) -> list[tuple[float, ...]]:
    """The medians of ``one_run`` for each checkout. The checkouts take turns, each run in the other order
    (this, baseline; baseline, this; ...): a load that changes during the runs weighs on both alike."""
    rows: list[list[tuple[float, ...]]] = [[] for _ in roots]
    for n in range(runs):
        order = list(range(len(roots)))
        for k in order if n % 2 == 0 else order[::-1]:
            rows[k].append(one_run(roots[k]))
    return [tuple(statistics.median(column) for column in zip(*done, strict=True)) for done in rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="another checkout to measure in the same run")
    parser.add_argument("--env", action="store_true", help="also install the runtime-only environment (slow)")
    args = parser.parse_args(argv)
    found = measure([ROOT, *([args.baseline.resolve()] if args.baseline else [])], args.runs)
    p, q, g, a, f, o = found[0]
    base = found[1] if args.baseline else None
    i = statistics.median(bare_python() for _ in range(args.runs))
    print(f"medians of {args.runs} runs (s); the machine has {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    head = f"{'what':<36} {'this':>6} {'target':>7}"
    print(head + (f" {'baseline':>9} {'× base':>7}" if base else ""))
    rows = (("terminal chat: start to prompt", p, 0.5, 0), ("terminal chat: /quit to exit", q, None, 1),
            ("terminal chat: first answer", f, None, 4),
            ("terminal chat: pipe, start to answer", o, 0.5, 5),
            ("bot: start to first getUpdates", g, 1.5, 2), ("bot: start to first answer", a, None, 3))  # fmt: skip
    for name, value, target, k in rows:
        line = f"{name:<36} {value:>6.2f} {target if target else '':>7}"
        if base:
            line += f" {base[k]:>9.2f} {value / base[k]:>7.2f}"
        print(line)
    print(f"{'reference: python -c pass':<36} {i:>6.2f}")
    if args.env:
        took, size = runtime_env(ROOT)
        print(f"{'runtime-only .venv: install (s)':<36} {took:>6.1f}")
        print(f"{'runtime-only .venv: size (MB)':<36} {size:>6.0f}")
    print(f"goal (not gating): a pipe's first answer within 0.5 s: {'met' if o <= 0.5 else 'not met'}")
    ok = p <= 0.5 and g <= 1.5
    print(("PASS" if ok else "FAIL") + ": prompt within 0.5 s and first getUpdates within 1.5 s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
