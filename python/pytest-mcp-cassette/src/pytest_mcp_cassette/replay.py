"""Serving one cassette through the native binary, framework-free (docs/pytest.md).

An HTTP cassette is served by ``mcp-cassette replay FILE --listen 127.0.0.1:0 --control``; the
misses it logs are drained over the miss channel with a per-server token handed over in
``$MCP_CASSETTE_CONTROL_TOKEN`` (docs/adapters.md, "The miss channel"). A stdio cassette only
gets a command line: the client under test spawns it. Nothing here imports pytest.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from .binary import binary_path
from .errors import (
    CassetteFileError,
    CassetteHandleError,
    ReplayServerError,
)

TOKEN_ENV = "MCP_CASSETTE_CONTROL_TOKEN"
DRAIN_PATH = ".mcp-cassette/misses/drain"
UNUSED_PATH = ".mcp-cassette/unused"
#: How long the binary may take to print its URL.
START_TIMEOUT = 10.0
#: How long the binary may take to exit on SIGTERM before it is killed.
STOP_TIMEOUT = 5.0
#: How long a drain may take (it answers from memory).
DRAIN_TIMEOUT = 10.0
#: A header line longer than this is not one (a header is a few hundred bytes).
HEADER_LIMIT = 1024 * 1024
#: Stderr kept for an error message, from the end.
STDERR_KEPT = 16 * 1024
URL_LINE = re.compile(r"^mcp-cassette replay: serving .* server at (https?://\S+)\s*$")

OPTIONS = ("on_miss", "volatile", "redact_config", "listen", "timing", "fail_on_unused")


def _quote(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def read_header(path: Path, shown: str) -> Dict[str, Any]:
    """The first line of a cassette, parsed: its header. Raises CassetteFileError naming it."""
    try:
        with open(path, "rb") as f:
            head = f.readline(HEADER_LIMIT)
    except OSError as err:
        raise CassetteFileError(
            f"mcp-cassette: cannot open the cassette {shown} ({path}): {err.strerror or err}"
        ) from None
    line = head.decode("utf-8", "replace").lstrip("\ufeff").strip()
    try:
        header = json.loads(line)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("type") != "header":
        raise CassetteFileError(
            f"mcp-cassette: {shown} is not a cassette: its first line is not a cassette header "
            '({"type":"header",…})'
        )
    return header


def check_volatile(decl: Any) -> None:
    """The shape rules of a volatile declaration (docs/replay.md, "Declared volatility")."""

    def bad(why: str) -> ValueError:
        return ValueError(
            f"mcp-cassette: {why}: {_quote(decl)}. A volatile declaration is a JSON Pointer "
            "into the request params (/arguments/requestedAt), optionally scoped to one method "
            "(tools/call:/arguments/requestedAt)"
        )

    if not isinstance(decl, str):
        raise bad("a volatile declaration must be a string")
    if decl == "":
        raise bad("the declaration names no field")
    if decl.startswith("/"):
        return
    method, colon, pointer = decl.partition(":")
    if not colon:
        raise bad("neither a JSON Pointer nor a method-scoped one")
    if method == "":
        raise bad("the method scope is empty")
    if pointer == "":
        raise bad("the declaration names no field")
    if not pointer.startswith("/"):
        raise bad('the pointer after the method does not start with "/"')


@dataclass(frozen=True)
class Options:
    """Validated options: the marker's keyword arguments."""

    on_miss: str = "error"
    volatile: Tuple[str, ...] = ()
    redact_config: Optional[str] = None
    listen: str = "127.0.0.1:0"
    timing: str = "none"
    fail_on_unused: bool = False

    @classmethod
    def parse(cls, options: Dict[str, Any], base: Path) -> "Options":
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise TypeError(
                f"mcp-cassette: unknown option(s) {', '.join(unknown)} "
                f"(known: {', '.join(OPTIONS)})"
            )
        on_miss = options.get("on_miss", "error")
        if on_miss not in ("error", "warn"):
            raise ValueError(
                f'mcp-cassette: unknown on_miss {_quote(on_miss)} (expected "error" or "warn")'
            )
        timing = options.get("timing", "none")
        if timing not in ("none", "recorded"):
            raise ValueError(
                f'mcp-cassette: unknown timing {_quote(timing)} (expected "none" or "recorded")'
            )
        volatile = options.get("volatile", ())
        if isinstance(volatile, (str, bytes)) or not isinstance(volatile, (list, tuple)):
            raise TypeError("mcp-cassette: volatile must be a list of declarations")
        for decl in volatile:
            check_volatile(decl)
        listen = options.get("listen", "127.0.0.1:0")
        if not isinstance(listen, str) or listen == "":
            raise TypeError("mcp-cassette: listen must be a host:port string")
        redact = options.get("redact_config")
        redact_config = None if redact is None else str((base / os.fspath(redact)).resolve())
        fail_on_unused = options.get("fail_on_unused", False)
        if not isinstance(fail_on_unused, bool):
            raise TypeError("mcp-cassette: fail_on_unused must be True or False")
        return cls(on_miss, tuple(volatile), redact_config, listen, timing, fail_on_unused)

    def shared_flags(self) -> List[str]:
        """The flags both transports pass on: volatile declarations, then the redaction config."""
        flags: List[str] = []
        for decl in self.volatile:
            flags += ["--volatile", decl]
        if self.redact_config is not None:
            flags += ["--redact-config", self.redact_config]
        if self.fail_on_unused:
            flags.append("--fail-on-unused")
        return flags


def _quoted(stderr: str) -> str:
    """The end of what a process wrote on stderr, under a message."""
    text = stderr.rstrip()
    return " (it wrote nothing on stderr)" if text == "" else f"; its stderr:\n{text}"


def _how(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


# Drains go to 127.0.0.1 straight, whatever HTTP_PROXY says.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Server:
    """``replay --listen … --control`` for one cassette, for as long as its tests run."""

    def __init__(self, file: Path, shown: str, options: Options) -> None:
        self.file = file
        self.shown = shown
        self.options = options
        self.url: Optional[str] = None
        self.drained = 0
        self._proc: Optional[subprocess.Popen] = None
        self._token = secrets.token_hex(24)
        self._stderr = ""
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._reader: Optional[threading.Thread] = None
        self._stopping = False

    @property
    def pid(self) -> Optional[int]:
        return None if self._proc is None else self._proc.pid

    def stderr(self) -> str:
        with self._lock:
            return self._stderr

    def start(self) -> str:
        args = ["replay", str(self.file), "--listen", self.options.listen, "--control"]
        if self.options.timing != "none":
            args += ["--timing", self.options.timing]
        args += self.options.shared_flags()
        binary = binary_path()
        env = dict(os.environ)
        env[TOKEN_ENV] = self._token
        try:
            # stdin is a pipe held open and never written: under --control the replay stops
            # when it closes, which happens when this process ends however it ends, so a
            # replay never outlives its test run (docs/adapters.md, "Lifetime").
            self._proc = subprocess.Popen(
                [binary, *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=env,
            )
        except OSError as err:
            raise ReplayServerError(
                f"mcp-cassette: failed to start {binary} for {self.shown}: {err}"
            ) from None
        self._reader = threading.Thread(
            target=self._read_stderr, name=f"mcp-cassette stderr {self._proc.pid}", daemon=True
        )
        self._reader.start()
        if not self._ready.wait(START_TIMEOUT):
            self._proc.kill()
            self._proc.wait()
            raise ReplayServerError(
                f"mcp-cassette: the replay server for {self.shown} printed no URL within "
                f"{START_TIMEOUT:g} s{_quoted(self.stderr())}"
            )
        if self.url is None:
            # The reader saw end of file before a URL line: the process is gone or going.
            try:
                code = self._proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                code = self._proc.wait()
            self._reader.join(STOP_TIMEOUT)
            raise ReplayServerError(
                f"mcp-cassette: the replay server for {self.shown} exited before it was ready "
                f"({_how(code)}){_quoted(self.stderr())}"
            )
        return self.url

    def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        for raw in self._proc.stderr:
            line = raw.decode("utf-8", "replace")
            with self._lock:
                self._stderr = (self._stderr + line)[-STDERR_KEPT:]
            if self.url is None:
                found = URL_LINE.match(line.rstrip("\r\n"))
                if found:
                    self.url = found.group(1)
                    self._ready.set()
        self._ready.set()

    def check_alive(self) -> None:
        """Raises when the server is gone: its misses are unknowable and every request failed."""
        proc = self._proc
        if proc is None or self._stopping:
            return
        code = proc.poll()
        if code is None:
            return
        if self._reader is not None:
            self._reader.join(1.0)
        raise ReplayServerError(
            f"mcp-cassette: the replay server for {self.shown} exited during the test "
            f"({_how(code)}){_quoted(self.stderr())}"
        )

    def _control(self, path: str, what: str) -> Dict[str, Any]:
        """POSTs to a control-channel path and returns its JSON answer."""
        self.check_alive()
        assert self.url is not None
        request = urllib.request.Request(
            urllib.parse.urljoin(self.url, path),
            data=b"",
            method="POST",
            headers={"Authorization": f"Bearer {self._token}"},
        )
        try:
            with _OPENER.open(request, timeout=DRAIN_TIMEOUT) as response:
                answer = json.load(response)
        except (OSError, ValueError) as err:
            self.check_alive()
            raise ReplayServerError(
                f"mcp-cassette: failed to {what} of {self.shown}: {err}"
            ) from None
        return answer if isinstance(answer, dict) else {}

    def drain(self) -> List[Dict[str, Any]]:
        """The misses logged since the last drain, oldest first."""
        misses = self._control(DRAIN_PATH, "drain the misses").get("misses")
        misses = misses if isinstance(misses, list) else []
        self.drained += len(misses)
        return misses

    def unused(self) -> List[Dict[str, Any]]:
        """The recordings no session of this replay has used so far, in cassette order
        (docs/replay.md, "Unused recordings")."""
        unused = self._control(UNUSED_PATH, "read the unused recordings").get("unused")
        return unused if isinstance(unused, list) else []

    def stop(self) -> None:
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        self._stopping = True
        proc.terminate()
        try:
            proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdin is not None:
            proc.stdin.close()
        if self._reader is not None:
            self._reader.join(1.0)


@dataclass(frozen=True)
class ServerInfo:
    """What a test may know of an HTTP cassette's replay process."""

    url: str
    pid: int
    _server: Server = field(repr=False, compare=False)

    def misses(self) -> int:
        """Misses drained so far from this server (each test's are drained after it)."""
        return self._server.drained


class Cassette:
    """The handle the ``mcp_cassette`` fixture returns (docs/pytest.md, "The handle")."""

    def __init__(
        self,
        file: Path,
        shown: str,
        transport: str,
        options: Options,
        server: Optional[Server] = None,
    ) -> None:
        self.file = str(file)
        self.shown = shown
        self.transport = transport
        self.options = options
        self._server = server
        # Looked up now, so a missing binary fails the test up front for stdio cassettes too.
        self._binary = binary_path() if server is None else None

    def __repr__(self) -> str:
        return f"<mcp-cassette {self.transport} cassette {self.shown}>"

    @property
    def url(self) -> str:
        """The HTTP replay's base URL."""
        if self._server is None:
            raise CassetteHandleError(
                f"mcp-cassette: {self.shown} is a stdio cassette; spawn .command instead of "
                "connecting to .url"
            )
        self._server.check_alive()
        assert self._server.url is not None
        return self._server.url

    @property
    def command(self) -> List[str]:
        """The argv a client spawns to talk to a stdio replay of the cassette."""
        if self._server is not None:
            raise CassetteHandleError(
                f"mcp-cassette: {self.shown} is an http cassette; connect to .url instead of "
                "spawning .command"
            )
        assert self._binary is not None
        return [self._binary, "replay", self.file, *self.options.shared_flags()]

    @property
    def server(self) -> ServerInfo:
        """The HTTP replay process: url, pid, and a count of the misses drained so far."""
        if self._server is None:
            raise CassetteHandleError(
                f"mcp-cassette: {self.shown} is a stdio cassette; it has no replay server of "
                "its own, spawn .command"
            )
        url = self.url
        assert self._server.pid is not None
        return ServerInfo(url, self._server.pid, self._server)


def open_cassette(
    path: Union[str, "os.PathLike[str]"], options: Dict[str, Any], base: Path
) -> Tuple[Path, str, str, Options]:
    """Resolves and checks a cassette and its options: (absolute path, shown, transport, options)."""
    shown = os.fspath(path)
    if not isinstance(shown, str) or shown == "":
        raise TypeError("mcp-cassette: the cassette path must be a non-empty string")
    opts = Options.parse(options, base)
    file = (base / shown).resolve()
    header = read_header(file, shown)
    transport = "http" if header.get("transport") == "http" else "stdio"
    return file, shown, transport, opts


