"""The pytest plugin: the ``mcp_cassette`` marker and fixture (docs/pytest.md).

Registered through the ``pytest11`` entry point. One replay server per cassette and marker
owner (the test, class or module the marker is written on), started by the first test that asks
for the fixture and stopped after the owner's last test; every test's misses are drained when
it finishes and fail that test in its call phase, so the report says *failed*.
"""

from __future__ import annotations

import atexit
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import pytest

from .errors import (
    CassetteHandleError,
    CassetteMissWarning,
    ReplayServerError,
    misses_to_error,
    unused_to_error,
)
from .replay import Cassette, Options, Server, open_cassette

MARKER = "mcp_cassette"
#: The unrelated ``mcp-cassette`` distribution on PyPI registers its plugin under this name and
#: defines a fixture and marker of the same names as ours.
_NAMESAKE = "mcp_cassette"


class _Broken:
    """The handle of a test whose cassette could not be served: every member raises why."""

    def __init__(self, error: BaseException) -> None:
        self._error = error

    def __getattr__(self, name: str) -> Any:
        raise _fresh(self._error)


def _fresh(error: BaseException) -> BaseException:
    """A new instance of a stored error, so each test's traceback is its own."""
    try:
        return type(error)(*error.args)
    except Exception:
        return error


class _Binding:
    """What the fixture bound to one test: its handle, and the server whose misses it owns."""

    def __init__(
        self,
        handle: Any,
        server: Optional[Server] = None,
        options: Optional[Options] = None,
        error: Optional[BaseException] = None,
    ) -> None:
        self.handle = handle
        self.server = server
        self.options = options
        self.error = error
        self.dead = False

    def settle(self, item: pytest.Item) -> None:
        """Drains the test's misses: raises them (on_miss="error") or warns (on_miss="warn")."""
        __tracebackhide__ = True  # the report shows the test, not the plugin
        if self.server is None or self.server.url is None or self.dead:
            return
        try:
            misses = self.server.drain()
        except ReplayServerError:
            # Reported once, by the phase that found it; teardown does not repeat it.
            self.dead = True
            raise
        error = misses_to_error(misses)
        if error is None:
            return
        assert self.options is not None
        if self.options.on_miss == "warn":
            item.warn(CassetteMissWarning(str(error)))
            return
        raise error

    def discard(self) -> None:
        """Drains and drops: the test ended by skip or exit, which keeps its own outcome."""
        if self.server is not None and self.server.url is not None:
            try:
                self.server.drain()
            except Exception:
                pass


_Key = Tuple[str, str, Options]


class _Registry:
    """The live replay servers of the session, each with the node that owns it."""

    def __init__(self) -> None:
        self._live: Dict[_Key, Tuple[Any, Server, Optional[BaseException]]] = {}

    def serve(self, owner: Any, file: Path, shown: str, options: Options) -> Server:
        key = (owner.nodeid, str(file), options)
        entry = self._live.get(key)
        if entry is None:
            server = Server(file, shown, options)
            error: Optional[BaseException] = None
            try:
                server.start()
            except Exception as err:
                # Kept for the owner's other tests: each fails with the cause, and the binary is
                # not started again for every one of them.
                error = err
            entry = (owner, server, error)
            self._live[key] = entry
        _, server, error = entry
        if error is not None:
            raise _fresh(error)
        return server

    def release(self, nextitem: Optional[pytest.Item]) -> None:
        """Stops the servers whose owner has no test left to run next. With fail_on_unused,
        raises CassetteUnusedError for the recordings none of the owner's tests used."""
        __tracebackhide__ = True  # the report shows the test, not the plugin
        chain = [] if nextitem is None else nextitem.listchain()
        errors = []
        for key, (owner, server, error) in list(self._live.items()):
            if any(node is owner for node in chain):
                continue
            del self._live[key]
            try:
                if server.options.fail_on_unused and error is None and server.url is not None:
                    found = unused_to_error(server.unused(), server.shown, owner.nodeid)
                    if found is not None:
                        errors.append(found)
            except ReplayServerError:
                pass  # the server died: the test that saw it die already failed saying so
            finally:
                server.stop()
        if errors:
            raise errors[0]

    def stop_all(self) -> None:
        live, self._live = self._live, {}
        for _, server, _ in live.values():
            server.stop()


_REGISTRY = pytest.StashKey[_Registry]()
_BINDING = pytest.StashKey[_Binding]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(path, on_miss='error', volatile=(), redact_config=None, "
        "listen='127.0.0.1:0', timing='none', fail_on_unused=False): the cassette the mcp_cassette fixture serves "
        "(pytest-mcp-cassette)",
    )
    if config.pluginmanager.has_plugin(_NAMESAKE):
        raise pytest.UsageError(
            "pytest-mcp-cassette: the unrelated mcp-cassette package's pytest plugin is "
            "installed too, and both define an mcp_cassette fixture and marker. Uninstall one, "
            f"or disable it for this run with -p no:{_NAMESAKE}"
        )
    registry = _Registry()
    config.stash[_REGISTRY] = registry
    # Belt and braces: the replays also stop when this process's end closes their stdin.
    atexit.register(registry.stop_all)


def pytest_unconfigure(config: pytest.Config) -> None:
    registry = config.stash.get(_REGISTRY, None)
    if registry is not None:
        registry.stop_all()


def pytest_sessionfinish(session: pytest.Session) -> None:
    registry = session.config.stash.get(_REGISTRY, None)
    if registry is not None:
        registry.stop_all()


def _bind(item: pytest.Item) -> _Binding:
    found = next(iter(item.iter_markers_with_node(name=MARKER)), None)
    if found is None:
        raise CassetteHandleError(
            f"mcp-cassette: the {MARKER} fixture needs a cassette: mark the test, its class or "
            f'its module with @pytest.mark.{MARKER}("path/to/session.cassette.jsonl")'
        )
    owner, mark = found
    if len(mark.args) != 1:
        raise TypeError(
            f"mcp-cassette: the {MARKER} marker takes one positional argument, the cassette "
            f'path: @pytest.mark.{MARKER}("session.cassette.jsonl", on_miss="warn") '
            f"(got {len(mark.args)})"
        )
    # Relative paths are read from the test file's directory, wherever pytest was started.
    base = Path(str(item.path)).parent
    file, shown, transport, options = open_cassette(mark.args[0], dict(mark.kwargs), base)
    if transport != "http":
        return _Binding(Cassette(file, shown, transport, options), options=options)
    server = item.config.stash[_REGISTRY].serve(owner, file, shown, options)
    return _Binding(Cassette(file, shown, transport, options, server), server, options)


@pytest.fixture
def mcp_cassette(request: pytest.FixtureRequest) -> Any:
    """The cassette of the test's ``mcp_cassette`` marker, served: ``.url`` or ``.command``."""
    item = request.node
    try:
        binding = _bind(item)
    except Exception as err:
        # Raised again in the call phase, so the test is reported failed, with the cause, rather
        # than as an error in setup.
        binding = _Binding(_Broken(err), error=err)
    item.stash[_BINDING] = binding
    return binding.handle


def _failed(exc: BaseException) -> bool:
    """Whether a test body's exception makes it fail (pytest.fail() is a BaseException)."""
    if isinstance(exc, pytest.xfail.Exception):
        return False
    return isinstance(exc, (Exception, pytest.fail.Exception))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    __tracebackhide__ = True  # the report shows the test, not the plugin
    binding = item.stash.get(_BINDING, None)
    if binding is None:
        return (yield)
    if binding.error is not None:
        raise _fresh(binding.error)
    try:
        result = yield
    except BaseException as exc:
        if _failed(exc):
            # A miss is usually why the test broke: raised here, the miss error is the verdict
            # and the test's own failure is shown above it as its context.
            binding.settle(item)
        else:
            # Skipped, xfailed, interrupted: that outcome stands; the misses are dropped.
            binding.discard()
        raise
    binding.settle(item)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: Optional[pytest.Item]):
    __tracebackhide__ = True  # the report shows the test, not the plugin
    try:
        return (yield)
    finally:
        binding = item.stash.get(_BINDING, None)
        try:
            if binding is not None:
                # Misses caused by fixture teardown (a client closing its session): an error in
                # teardown, as nothing later could be blamed for them.
                binding.settle(item)
        finally:
            registry = item.config.stash.get(_REGISTRY, None)
            if registry is not None:
                # After the owner's last test: unused recordings are an error in its teardown,
                # as an afterAll failure is in the JavaScript adapters.
                registry.release(nextitem)
