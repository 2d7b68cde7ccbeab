"""A preloaded Python that starts the end-to-end tests' ``python -m bot`` processes by forking.

Each bot process spends most of its start importing its libraries: ``import anthropic`` alone costs
~2.8 s of CPU (its SDK builds hundreds of typed models), python-telegram-bot another 0.5 s, and the
suite starts about a hundred bots. The fork server imports those *third-party* libraries once per
test worker, then forks a child for every bot the tests start. The child is a real ``python -m bot``
process: it gets its own environment, working directory, argv, log file and stdin (``/dev/null``),
imports the bot's own code fresh and runs ``bot.__main__`` through ``runpy`` exactly as ``-m``
does, exits through the interpreter's normal shutdown, and is signalled and killed by its pid. Only
what a library does at import time happens once, before the environment is set: none of the
preloaded libraries reads the environment then (``PRELOAD``; ``anthropic`` reads ``ANTHROPIC_LOG``
at import, which no test sets).

``TEST_FORKSERVER=0`` turns it off (every bot is a plain ``subprocess.Popen``); a test that passes a
``preexec`` callable always gets a plain one (resource limits go with the request instead: ``rlimits``).

Protocol: JSON messages on a unix socket (SOCK_SEQPACKET, so each is whole). The client sends
``{"id", "args", "env", "cwd", "log" or the child's stdin, stdout and stderr as descriptors beside
the message, "tty", "module" (``bot``), "rlimits" (optional)}``; the server answers ``{"id", "pid"}``
once it forked (or ``{"id", "error"}``), and ``{"exit": pid, "code": n, "cpu": s}`` when a child ends
(``n`` as ``Popen.returncode``: negative for a signal).
"""

from __future__ import annotations

import fcntl
import gc
import io
import json
import os
import resource
import runpy
import selectors
import signal
import socket
import subprocess
import sys
import termios
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

PRELOAD = (
    "anthropic",
    "httpx",
    "httpx2",
    "telegram",
    "telegram.ext",
    "telegram.request",
    "pydantic",
    "PIL.Image",
    "pypdf",
    "numpy",  # memory.recall imports it (~0.15 s of CPU a bot)
    "dotenv",
    "sqlite3",
)
"""Third-party libraries imported once in the server (never the bot's own modules, unless a test asks
for more: ``ForkServer.for_env(env, preload=...)``)."""

ROOT = Path(__file__).resolve().parent.parent


# --- the server (``python -m tests.forkserver``) --------------------------------------------------


def _preload(extra: Sequence[str] = ()) -> None:
    import importlib

    for name in (*PRELOAD, *extra):
        try:
            importlib.import_module(name)
        except ImportError:  # an optional library: the child imports it itself if it needs it
            pass
    # what is loaded now stays for good: out of the garbage collector's sight, so that a child's
    # collections neither walk those objects nor copy the pages they are on
    gc.freeze()


def _serve(channel: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    """Answer requests until the client goes (returns None) or, in a forked child, return its request
    and the descriptors that came with it (its stdin, stdout and stderr, or none)."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)  # a stray print goes to stderr
    children: dict[int, int] = {}  # pidfd -> pid
    selector = selectors.DefaultSelector()
    selector.register(channel, selectors.EVENT_READ)

    def reply(message: dict[str, Any]) -> None:
        channel.send(json.dumps(message).encode())

    while True:
        for key, _ in selector.select():
            if key.fileobj is not channel:  # a child ended
                pidfd = key.fd
                pid = children.pop(pidfd)
                selector.unregister(pidfd)
                os.close(pidfd)
                _, status, usage = os.wait4(pid, 0)
                code = os.waitstatus_to_exitcode(status)
                reply({"exit": pid, "code": code, "cpu": usage.ru_utime + usage.ru_stime})
                continue
            data, fds, _, _ = socket.recv_fds(channel, 1 << 20, 3)
            if not data:
                return None
            request = json.loads(data)
            try:
                pid = os.fork()
            except OSError as e:
                reply({"id": request["id"], "error": str(e)})
                pid = -1
            if pid == 0:  # the child: drop everything of the server's
                selector.close()
                channel.close()
                for pidfd in children:
                    os.close(pidfd)
                return request, fds
            for fd in fds:
                os.close(fd)
            if pid > 0:
                pidfd = os.pidfd_open(pid)
                children[pidfd] = pid
                selector.register(pidfd, selectors.EVENT_READ)
                reply({"id": request["id"], "pid": pid})


def _fresh_stdio() -> None:
    """sys.stdin/stdout/stderr made anew over fds 0-2, as the interpreter makes them at start
    (CPython's create_stdio): whether a stream is line-buffered depends on what the fd is now."""
    unbuffered = sys.__stdout__.write_through  # PYTHONUNBUFFERED, the same for server and child
    for fd, attr in enumerate(("stdin", "stdout", "stderr")):
        old = getattr(sys, f"__{attr}__")
        writing = fd > 0
        buffering = 0 if writing and unbuffered else -1
        buffer = open(fd, "wb" if writing else "rb", buffering, closefd=False)  # noqa: SIM115
        raw = buffer.raw if buffering else buffer
        raw.name = f"<{attr}>"
        line_buffering = not unbuffered and (raw.isatty() or fd == 2)
        stream = io.TextIOWrapper(buffer, old.encoding, old.errors, "\n", line_buffering, unbuffered)
        stream.mode = "w" if writing else "r"
        setattr(sys, attr, stream)
        setattr(sys, f"__{attr}__", stream)


def _become(request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: turn into ``python -m <module> <args>`` (``bot`` unless the request names
    another module) and run it."""
    for which, soft, hard in request.get("rlimits", ()):  # as a preexec_fn setting them would
        resource.setrlimit(which, (soft, hard))
    if fds:  # the client's stdin, stdout and stderr
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in set(fds):
            if fd > 2:
                os.close(fd)
    else:  # stdin from /dev/null (already), stdout and stderr to the log
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
    _fresh_stdio()
    if request.get("tty"):  # a new session whose controlling terminal is the pty on stdin
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[0] = os.getcwd()  # what ``python -m`` puts first
    sys.argv = ["-m", *request["args"]]  # runpy puts the module's path first, as -m does
    runpy.run_module(request.get("module", "bot"), run_name="__main__", alter_sys=True)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C on pytest must not kill the server first
    channel = socket.socket(fileno=int(sys.argv[1]))
    _preload(sys.argv[2:])
    child = _serve(channel)
    if child is None:
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)  # the child: as a fresh interpreter
    _become(*child)  # SystemExit from the bot ends this process the normal way


# --- the client (in the test process) --------------------------------------------------------------


class ForkedProcess:
    """The part of ``subprocess.Popen`` the tests use, for a child of the fork server."""

    def __init__(self, server: ForkServer, pid: int, args: list[str], pipes: dict[str, int]) -> None:
        self._server = server
        self.pid = pid
        self.args = args
        self.returncode: int | None = None
        self.stdin: IO[bytes] | None = open(pipes["stdin"], "wb") if "stdin" in pipes else None  # noqa: SIM115
        self.stdout: IO[bytes] | None = open(pipes["stdout"], "rb") if "stdout" in pipes else None  # noqa: SIM115
        self.stderr: IO[bytes] | None = open(pipes["stderr"], "rb") if "stderr" in pipes else None  # noqa: SIM115

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._server.exit_code(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        code = self._server.wait_exit(self.pid, timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        self.returncode = code
        return code

    def communicate(self, input: bytes | None = None, timeout: float | None = None) -> tuple[bytes, bytes]:
        """Write ``input`` and close stdin, read stdout and stderr to the end, wait (as Popen's)."""
        out: dict[str, bytes] = {}

        def drain(name: str, pipe: IO[bytes] | None) -> None:
            out[name] = pipe.read() if pipe is not None else b""

        readers = [
            threading.Thread(target=drain, args=(n, getattr(self, n)), daemon=True) for n in ("stdout", "stderr")
        ]
        for reader in readers:
            reader.start()
        if self.stdin is not None:
            try:
                if input:
                    self.stdin.write(input)
                self.stdin.close()
            except BrokenPipeError:  # it ended without reading everything, as Popen allows
                pass
        self.wait(timeout)
        for reader in readers:
            reader.join(timeout)
        return out.get("stdout", b""), out.get("stderr", b"")

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:  # it ended just now
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _can_watch_children() -> bool:
    """Whether this system has pidfds (Linux 5.3+), which the server waits on for its children."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


STARTUP_ENV = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "SYSTEMROOT",
    "TMPDIR",
    "PYTHONPATH",
    "PYTHONUTF8",
    "PYTHONIOENCODING",
    "PYTHONHASHSEED",
    "PYTHONWARNINGS",
    "PYTHONDEVMODE",
    "PYTHONOPTIMIZE",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
    "OPENBLAS_NUM_THREADS",  # numpy's OpenBLAS sizes its threads when it loads
    "OMP_NUM_THREADS",
    "NUMPY_MADVISE_HUGEPAGE",
    "NPY_DISABLE_CPU_FEATURES",
)
"""What Python (or a preloaded library) reads while it starts: a child's must equal its server's, so
there is one server per combination the tests use (in practice one)."""


def startup_env(env: dict[str, str]) -> dict[str, str]:
    """The part of ``env`` that a server and its children must share (STARTUP_ENV)."""
    return {k: env[k] for k in STARTUP_ENV if k in env}


class ForkServer:
    """A fork server for one start-up environment (and set of preloaded modules), started on first
    use (one set per test process)."""

    _servers: dict[tuple[tuple[tuple[str, str], ...], tuple[str, ...]], ForkServer] = {}
    children_cpu = 0.0  # CPU seconds of the children that ended so far (for profiling the suite)
    _lock = threading.Lock()

    def __init__(self, startup: dict[str, str], preload: Sequence[str] = ()) -> None:
        self.channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.forkserver", str(theirs.fileno()), *preload],
            cwd=ROOT,
            env=startup,  # the child's sys.path: its own working directory first, then this PYTHONPATH
            stdin=subprocess.DEVNULL,
            pass_fds=(theirs.fileno(),),
        )
        theirs.close()
        self._send_lock = threading.Lock()
        self._changed = threading.Condition()
        self._next_id = 0
        self._spawned: dict[int, dict[str, Any]] = {}
        self._exits: dict[int, int] = {}
        self._closed = False
        threading.Thread(target=self._read, name="forkserver-replies", daemon=True).start()

    @classmethod
    def for_env(cls, env: dict[str, str], preload: Sequence[str] = ()) -> ForkServer | None:
        """The server for a child with this environment, or None when fork servers are turned off.
        ``preload``: modules the server imports besides PRELOAD (for children that never read the
        environment while those modules load, e.g. the crash suite's workers)."""
        if os.environ.get("TEST_FORKSERVER", "1") == "0" or not _can_watch_children():
            return None
        startup = startup_env(env)
        key = (tuple(sorted(startup.items())), tuple(preload))
        with cls._lock:
            server = cls._servers.get(key)
            if server is None or server._closed:
                server = cls._servers[key] = cls(startup, preload)
            return server

    @classmethod
    def private(cls, env: dict[str, str], preload: Sequence[str] = ()) -> ForkServer | None:
        """Like ``for_env``, but a server of the caller's own, which the caller closes."""
        if os.environ.get("TEST_FORKSERVER", "1") == "0" or not _can_watch_children():
            return None
        return cls(startup_env(env), preload)

    @classmethod
    def close_all(cls) -> None:
        with cls._lock:
            for server in cls._servers.values():
                server.close()
            cls._servers.clear()

    def _read(self) -> None:
        while message := self.channel.recv(65536):
            answer = json.loads(message)
            with self._changed:
                if "exit" in answer:
                    self._exits[answer["exit"]] = answer["code"]
                    ForkServer.children_cpu += answer["cpu"]
                else:
                    self._spawned[answer["id"]] = answer
                self._changed.notify_all()
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def spawn(
        self,
        args: list[str],
        env: dict[str, str],
        cwd: Path,
        log: Path | None = None,
        *,
        stdin: int | None = None,
        stdout: int | None = None,
        stderr: int | None = None,
        tty: bool = False,
        module: str = "bot",
        rlimits: dict[int, tuple[int, int]] | None = None,
    ) -> ForkedProcess:
        """``python -m bot <args>`` (or ``-m module``): with ``log``, stdin from /dev/null and its
        output to the file; else ``stdin``/``stdout``/``stderr`` each a descriptor, ``subprocess.PIPE``
        (the returned process has the other end), or for stderr ``subprocess.STDOUT``. ``tty``: a new
        session whose controlling terminal is the pty on its stdin (``start_new_session`` + TIOCSCTTY).
        ``rlimits``: ``resource.setrlimit`` limits set in the child before it runs the module."""
        mine: dict[str, int] = {}
        theirs: list[int] = []
        close_after: list[int] = []
        if log is None:
            for name, spec in (("stdin", stdin), ("stdout", stdout), ("stderr", stderr)):
                if spec == subprocess.STDOUT:
                    theirs.append(theirs[1])
                elif spec == subprocess.PIPE:
                    r, w = os.pipe()
                    ours, child = (w, r) if name == "stdin" else (r, w)
                    mine[name] = ours
                    theirs.append(child)
                    close_after.append(child)
                elif spec is None:
                    raise ValueError(f"{name}: give a descriptor or subprocess.PIPE (or a log)")
                else:
                    theirs.append(spec)
        with self._send_lock:
            self._next_id += 1
            request_id = self._next_id
            request: dict[str, Any] = {"id": request_id, "args": args, "env": env, "cwd": str(cwd), "tty": tty}
            request["module"] = module
            if rlimits:
                request["rlimits"] = [[which, soft, hard] for which, (soft, hard) in rlimits.items()]
            if log is not None:
                request["log"] = str(log)
            socket.send_fds(self.channel, [json.dumps(request).encode()], theirs)
        for fd in close_after:  # the child has its own copies now
            os.close(fd)
        with self._changed:
            if not self._changed.wait_for(lambda: request_id in self._spawned or self._closed, timeout=60):
                raise RuntimeError("the fork server did not answer")
            if request_id not in self._spawned:
                raise RuntimeError("the fork server is gone")
            answer = self._spawned.pop(request_id)
        if "error" in answer:
            for fd in mine.values():
                os.close(fd)
            raise OSError(answer["error"])
        return ForkedProcess(self, answer["pid"], [sys.executable, "-m", module, *args], mine)

    def exit_code(self, pid: int) -> int | None:
        with self._changed:
            return self._exits.get(pid)

    def wait_exit(self, pid: int, timeout: float | None) -> int | None:
        with self._changed:
            self._changed.wait_for(lambda: pid in self._exits or self._closed, timeout=timeout)
            return self._exits.get(pid)

    def close(self) -> None:
        # shutdown, not just close: the reply thread is blocked in recv() on this socket, and a close()
        # alone leaves the socket open until that call returns, so the server never saw the end and
        # was killed after waiting 10 s (at the end of every test process, for each of its servers)
        try:
            self.channel.shutdown(socket.SHUT_RDWR)  # the server sees the end and exits
        except OSError:  # the server is gone already
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.channel.close()


def popen_bot(
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    *,
    stdin: int = subprocess.PIPE,
    stdout: int = subprocess.PIPE,
    stderr: int = subprocess.PIPE,
    tty: bool = False,
) -> ForkedProcess | subprocess.Popen[bytes]:
    """``python -m bot <args>`` with these stdin/stdout/stderr (descriptors or ``subprocess.PIPE``):
    forked by the fork server, or a plain ``subprocess.Popen`` when it is turned off."""
    server = ForkServer.for_env(env)
    if server is not None:
        return server.spawn(args, env, cwd, stdin=stdin, stdout=stdout, stderr=stderr, tty=tty)
    return subprocess.Popen(
        [sys.executable, "-m", "bot", *args],
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        cwd=cwd,
        env=env,
        start_new_session=tty,
        preexec_fn=(lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0)) if tty else None,
    )


def run_bot(
    args: list[str], env: dict[str, str], cwd: Path, input: bytes = b"", timeout: float | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Like ``subprocess.run(..., input=input, capture_output=True, timeout=timeout)``."""
    proc = popen_bot(args, env, cwd)
    try:
        out, err = proc.communicate(input, timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise
    assert proc.returncode is not None
    return subprocess.CompletedProcess([sys.executable, "-m", "bot", *args], proc.returncode, out, err)


if __name__ == "__main__":
    main()
