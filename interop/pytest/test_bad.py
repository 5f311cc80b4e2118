import os
import signal
import time

import pytest

from pytest_mcp_cassette import (
    CassetteMismatchError,
    CassetteMissError,
    ReplayError,
    is_mismatch,
    misses_to_error,
)


@pytest.mark.mcp_cassette("cassettes/no-such.http.jsonl")
def test_a_missing_cassette_fails_naming_the_file(mcp_cassette):
    pass


@pytest.mark.mcp_cassette("cassettes/broken.jsonl")
def test_a_file_that_is_not_a_cassette_fails_naming_it(mcp_cassette):
    pass


@pytest.mark.mcp_cassette("cassettes/tools.http.jsonl", listen="not-an-address")
def test_a_binary_that_exits_early_fails_with_its_stderr(mcp_cassette):
    pass


def test_the_fixture_without_a_marker_fails_saying_so(mcp_cassette):
    pass


@pytest.mark.mcp_cassette("cassettes/tools.http.jsonl", onMiss="warn")
def test_an_unknown_option_fails_naming_it(mcp_cassette):
    pass


@pytest.mark.mcp_cassette("cassettes/tools.http.jsonl")
def test_a_replay_killed_during_the_test_fails_it(mcp_cassette):
    os.kill(mcp_cassette.server.pid, signal.SIGKILL)
    time.sleep(0.2)


def test_one_set_of_error_classes():
    assert isinstance(CassetteMismatchError("m", []), ReplayError)
    assert isinstance(CassetteMissError("m", []), ReplayError)
    assert is_mismatch({"kind": "params-differ", "changes": []})
    assert not is_mismatch({"kind": "unknown-tool"})
    assert misses_to_error([]) is None
    error = misses_to_error([{"method": "tools/call", "diagnosis": "d",
                              "reason": {"kind": "params-differ", "changes": [{"path": "/x"}]}}])
    assert type(error) is CassetteMismatchError
    assert error.changes == [{"path": "/x"}]
    assert str(error) == ('mcp-cassette: no recorded answer for "tools/call", d. '
                          "Re-record the cassette or adjust the interaction.")
