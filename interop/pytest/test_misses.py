import pytest
from mcp.shared.exceptions import MCPError

from conftest import session
from pytest_mcp_cassette import CassetteMismatchError


@pytest.mark.mcp_cassette("cassettes/tools.http.jsonl")
class TestMisses:
    """One replay server for the class: a miss fails the test that caused it, and only it."""

    def test_fails_on_drifted_arguments(self, mcp_cassette):
        async def run(client):
            with pytest.raises(MCPError):
                await client.call_tool("echo", {"m": "drifted"})

        session(mcp_cassette.url, run)
        # No failing assertion: the plugin fails this test after it.

    def test_passes_between_two_misses(self, mcp_cassette):
        async def run(client):
            return (await client.call_tool("echo", {"m": "recorded"})).content[0].text

        assert session(mcp_cassette.url, run) == "recorded"

    def test_fails_on_an_unknown_tool(self, mcp_cassette):
        async def run(client):
            with pytest.raises(MCPError):
                await client.call_tool("nope", {})

        session(mcp_cassette.url, run)

    def test_counts_further_misses(self, mcp_cassette):
        async def run(client):
            for name, args in (("nope", {}), ("echo", {"m": "again"})):
                with pytest.raises(MCPError):
                    await client.call_tool(name, args)

        session(mcp_cassette.url, run)

    def test_exposes_the_changes_of_a_mismatch(self, mcp_cassette, failures):
        seen = failures["test_fails_on_drifted_arguments"]
        assert type(seen) is CassetteMismatchError
        assert seen.changes == [{"path": "/m", "recorded": "recorded", "live": "drifted"}]
        assert seen.reason["kind"] == "arguments-differ"
        assert len(seen.misses) == 1
        assert seen.misses[0]["tool"] == "echo"
        assert mcp_cassette.server.misses() == 4

    def test_fails_with_the_miss_when_the_sdk_error_is_not_caught(self, mcp_cassette):
        async def run(client):
            await client.call_tool("echo", {"m": "uncaught"})

        session(mcp_cassette.url, run)
