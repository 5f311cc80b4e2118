"""Shared by the plugin's specs (see README.md): an SDK session helper, and the errors tests
raised, kept for a later test to inspect (pytest has no other way to hand a verdict's error to
another test)."""

import os

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

FAILURES = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if call.when == "call" and call.excinfo is not None:
        FAILURES[item.name] = call.excinfo.value
    return report


@pytest.fixture
def failures():
    return FAILURES


def session(target, fn):
    """Runs ``await fn(client)`` in an official-SDK session with ``target``: a URL (Streamable
    HTTP) or an argv (stdio). Legacy mode: the fixture cassettes hold no ``server/discover``
    probe, so the SDK's auto mode would miss on it."""
    if isinstance(target, str):
        server = target
    else:
        server = StdioServerParameters(command=target[0], args=list(target[1:]))

    async def main():
        async with Client(server, mode="legacy") as client:
            return await fn(client)

    return anyio.run(main)


def record_pid(pid):
    """Appends a replay's pid to $PYTEST_REPLAY_PIDS, for the driver to check it is gone."""
    path = os.environ.get("PYTEST_REPLAY_PIDS")
    if path:
        with open(path, "a") as f:
            f.write(f"{pid}\n")
