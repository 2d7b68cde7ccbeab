"""A preloaded Python that starts the end-to-end tests' ``python -m bot`` processes by forking.

Each bot process spends most of its start importing its libraries: python-telegram-bot ~0.5 s of
CPU, httpx, numpy, Pillow and pypdf more, and the suite starts about a hundred bots. The fork server
imports those *third-party* libraries once per test worker, then forks a child for every bot the tests
start. The child is a real ``python -m bot`` process: it gets its own environment, working directory,
argv, log file and stdin (``/dev/null``), imports the bot's own code fresh and runs ``bot.__main__``
through ``runpy`` exactly as ``-m`` does, exits through the interpreter's normal shutdown, and is
signalled and killed by its pid. Only what a library does at import time happens once, before the
environment is set: none of the preloaded libraries reads the environment then (``PRELOAD``).

``TEST_FORKSERVER=0`` turns it off (every bot is a plain ``subprocess.Popen``); a test that passes a
``preexec`` callable always gets a plain one (resource limits go with the request instead: ``rlimits``).

Protocol: JSON messages on a unix socket (SOCK_SEQPACKET, so each is whole). The client sends
``{"id", "args", "env", "cwd", "log" or the child's stdin, stdout and stderr as descriptors beside
the message, "tty", "module" (``bot``), "rlimits" (optional)}``; the server answers ``{"id", "pid"}``
once it forked (or ``{"id", "error"}``), and ``{"exit": pid, "code": n, "cpu": s}`` when a child ends
(``n`` as ``Popen.returncode``: negative for a signal).
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import hashlib
import io
import json
import os
import resource
import runpy
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

PRELOAD = (
    "httpx",
    "telegram",
    "telegram.ext",
    "telegram.request",
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
    _warm_http()
    # what is loaded now stays for good: out of the garbage collector's sight, so that a child's
    # collections neither walk those objects nor copy the pages they are on
    gc.freeze()


def _warm_http() -> None:
    """What httpx imports on its first request and connection (httpcore's HTTP/1.1 stack, h11, anyio's
    asyncio backend), imported once here: one Models API read from a fake Messages API in this process,
    as every bot and terminal makes first; its threads have ended before anything is forked."""
    try:
        import asyncio

        import httpx
    except ImportError:
        return
    from tests.fakes.anthropic_server import FakeAnthropic

    async def read(url: str) -> None:
        async with httpx.AsyncClient(base_url=url) as client:
            await client.get("/v1/models/claude-sonnet-5-5", headers={"x-api-key": "sk-ant-warm-up"})

    with FakeAnthropic() as fake:
        asyncio.run(read(fake.url))
    deadline = time.monotonic() + 10
    while threading.active_count() > 1:  # the fake's connection threads, ending after the client closed
        if time.monotonic() > deadline:
            raise RuntimeError(f"threads left before forking: {threading.enumerate()}")
        time.sleep(0.01)


def _serve(sock: socket.socket, owner: int | None) -> tuple[dict[str, Any], list[int]] | None:
    """Answer requests until the client goes (returns None) or, in a forked child, return its request
    and the descriptors that came with it (its stdin, stdout and stderr, or none).

    ``sock`` is either the one client's end of a socket pair, or a listening socket that the test
    processes of a parallel run connect to (a shared server): that one serves every client that
    connects and ends when ``owner`` (the process that runs them all) has ended."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)  # a stray print goes to stderr
    listening = bool(sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN))
    clients: set[socket.socket] = set()
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, the client that asked for it)
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    try:
        owner_fd = os.pidfd_open(owner) if owner else -1
    except ProcessLookupError:  # the run ended while this server was still starting
        return None
    if owner_fd >= 0:
        selector.register(owner_fd, selectors.EVENT_READ)

    def reply(client: socket.socket, message: dict[str, Any]) -> None:
        try:
            client.send(json.dumps(message).encode())
        except OSError:  # that test process is gone (its children were its tests' to stop)
            pass

    def welcome(client: socket.socket) -> None:
        clients.add(client)
        reply(client, {"server": os.getpid()})

    if not listening:
        welcome(sock)
    while True:
        for key, _ in selector.select():
            if key.fd == owner_fd:  # the run is over
                return None
            if listening and key.fileobj is sock:
                client, _ = sock.accept()
                selector.register(client, selectors.EVENT_READ)
                welcome(client)
                continue
            if key.fd in children:  # a child ended
                pidfd = key.fd
                pid, client = children.pop(pidfd)
                selector.unregister(pidfd)
                os.close(pidfd)
                _, status, usage = os.wait4(pid, 0)
                code = os.waitstatus_to_exitcode(status)
                reply(client, {"exit": pid, "code": code, "cpu": usage.ru_utime + usage.ru_stime})
                continue
            client = key.fileobj
            assert isinstance(client, socket.socket)
            try:
                data, fds, _, _ = socket.recv_fds(client, 1 << 20, 3)
            except OSError:
                data, fds = b"", []
            if not data:  # that client is done
                if not listening:
                    return None
                selector.unregister(client)
                clients.discard(client)
                client.close()
                continue
            request = json.loads(data)
            try:
                pid = os.fork()
            except OSError as e:
                reply(client, {"id": request["id"], "error": str(e)})
                pid = -1
            if pid == 0:  # the child: drop everything of the server's
                selector.close()
                sock.close()
                for other in clients:
                    other.close()
                for pidfd in children:
                    os.close(pidfd)
                if owner_fd >= 0:
                    os.close(owner_fd)
                return request, fds
            for fd in fds:
                os.close(fd)
            if pid > 0:
                pidfd = os.pidfd_open(pid)
                children[pidfd] = (pid, client)
                selector.register(pidfd, selectors.EVENT_READ)
                reply(client, {"id": request["id"], "pid": pid})


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
    """``python -m tests.forkserver FD [--owner PID] [MODULE ...]``: serve on the socket FD (a client's
    socket pair, or a listening socket with ``--owner``), with MODULEs preloaded besides PRELOAD."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C on pytest must not kill the server first
    args = sys.argv[1:]
    sock = socket.socket(fileno=int(args.pop(0)))
    owner = int(args[1]) if args[:1] == ["--owner"] else None
    _preload(args[2:] if owner is not None else args)
    child = _serve(sock, owner)
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


SHARED_DIR = "TEST_FORKSERVER_DIR"
"""Set (with SHARED_OWNER) by the pytest process that runs parallel workers: a directory where their
fork servers listen, one per start-up environment for all of them, instead of one in each worker."""
SHARED_OWNER = "TEST_FORKSERVER_OWNER"
"""The pid of that pytest process: a shared server ends when it has ended."""


def share_between_workers() -> Callable[[], None]:
    """In the pytest process that starts parallel workers, before it starts them: their fork servers
    are shared (each imports the libraries once for the whole run, not once per worker). Returns
    what to call at the end (the servers themselves end with this process)."""
    directory = tempfile.mkdtemp(prefix="forkservers-")
    os.environ[SHARED_DIR] = directory
    os.environ[SHARED_OWNER] = str(os.getpid())

    def done() -> None:
        shutil.rmtree(directory, ignore_errors=True)

    return done


class ForkServer:
    """A fork server for one start-up environment (and set of preloaded modules), started on first
    use: one set per test process, or per run when the workers share them (``share_between_workers``)."""

    _servers: dict[tuple[tuple[tuple[str, str], ...], tuple[str, ...]], ForkServer] = {}
    _shared_procs: list[subprocess.Popen[bytes]] = []  # shared servers this process started (they outlive it)
    children_cpu = 0.0  # CPU seconds of the children that ended so far (for profiling the suite)
    _lock = threading.Lock()

    def __init__(self, channel: socket.socket, proc: subprocess.Popen[bytes] | None) -> None:
        """Use ``for_env`` or ``private``. ``proc``: the server, when it is this process's own."""
        self.channel = channel
        self.proc = proc
        self._pid = 0
        self._send_lock = threading.Lock()
        self._changed = threading.Condition()
        self._next_id = 0
        self._spawned: dict[int, dict[str, Any]] = {}
        self._exits: dict[int, int] = {}
        self._closed = False
        threading.Thread(target=self._read, name="forkserver-replies", daemon=True).start()

    @staticmethod
    def _command(fd: int, preload: Sequence[str], owner: int | None = None) -> list[str]:
        owned = ["--owner", str(owner)] if owner else []
        return [sys.executable, "-m", "tests.forkserver", str(fd), *owned, *preload]

    @classmethod
    def _own(cls, startup: dict[str, str], preload: Sequence[str]) -> ForkServer:
        channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        proc = subprocess.Popen(
            cls._command(theirs.fileno(), preload),
            cwd=ROOT,
            env=startup,  # the child's sys.path: its own working directory first, then this PYTHONPATH
            stdin=subprocess.DEVNULL,
            pass_fds=(theirs.fileno(),),
        )
        theirs.close()
        return cls(channel, proc)

    @classmethod
    def _shared(cls, directory: Path, owner: int, startup: dict[str, str], preload: Sequence[str]) -> ForkServer:
        """Connect to the run's server for this start-up environment, started by the first worker that
        needs it (the others wait on the lock meanwhile)."""
        key = json.dumps([sorted(startup.items()), list(preload)])
        name = hashlib.sha256(key.encode()).hexdigest()[:16]
        path = str(directory / f"{name}.sock")
        with open(directory / f"{name}.lock", "wb") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            channel = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                channel.connect(path)
            except OSError:  # not started yet (or gone): start it, listening where the others look
                channel.close()
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
                with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as listener:
                    listener.bind(path)
                    listener.listen(64)
                    cls._shared_procs.append(
                        subprocess.Popen(
                            cls._command(listener.fileno(), preload, owner),
                            cwd=ROOT,
                            env=startup,
                            stdin=subprocess.DEVNULL,
                            pass_fds=(listener.fileno(),),
                        )
                    )
                channel = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                channel.connect(path)  # queued until the server has preloaded and accepts
        return cls(channel, None)

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
                directory, owner = os.environ.get(SHARED_DIR), os.environ.get(SHARED_OWNER)
                if directory and owner and os.path.isdir(directory):
                    server = cls._shared(Path(directory), int(owner), startup, preload)
                else:
                    server = cls._own(startup, preload)
                cls._servers[key] = server
            return server

    @classmethod
    def private(cls, env: dict[str, str], preload: Sequence[str] = ()) -> ForkServer | None:
        """Like ``for_env``, but a server of the caller's own, which the caller closes."""
        if os.environ.get("TEST_FORKSERVER", "1") == "0" or not _can_watch_children():
            return None
        return cls._own(startup_env(env), preload)

    @classmethod
    def close_all(cls) -> None:
        with cls._lock:
            for server in cls._servers.values():
                server.close()
            cls._servers.clear()

    @property
    def pid(self) -> int:
        """The server's pid (it says so first thing on every connection)."""
        with self._changed:
            self._changed.wait_for(lambda: self._pid or self._closed, timeout=60)
            return self._pid

    def _read(self) -> None:
        while message := self.channel.recv(65536):
            answer = json.loads(message)
            with self._changed:
                if "server" in answer:
                    self._pid = answer["server"]
                elif "exit" in answer:
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
        """Let go of the server: one of this process's own exits (a shared one serves the other workers
        on, and ends with the run)."""
        # shutdown, not just close: the reply thread is blocked in recv() on this socket, and a close()
        # alone leaves the socket open until that call returns, so the server never saw the end and
        # was killed after waiting 10 s (at the end of every test process, for each of its servers)
        try:
            self.channel.shutdown(socket.SHUT_RDWR)  # the server sees the end (and its own one exits)
        except OSError:  # the server is gone already
            pass
        if self.proc is not None:
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
