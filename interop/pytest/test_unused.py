import pytest

from conftest import session


@pytest.mark.mcp_cassette("cassettes/tools.http.jsonl", fail_on_unused=True)
class TestAllUsed:
    def test_uses_half(self, mcp_cassette):
        async def run(client):
            await client.call_tool("echo", {"m": "recorded"})

        session(mcp_cassette.url, run)

    def test_uses_the_rest(self, mcp_cassette):
        async def run(client):
            await client.list_tools()
            await client.call_tool("stamp", {"m": "hi", "requestedAt": "now", "runId": "run-1"})

        session(mcp_cassette.url, run)


@pytest.mark.mcp_cassette("cassettes/tools.http.jsonl", fail_on_unused=True)
class TestSomeUnused:
    def test_uses_only_echo(self, mcp_cassette):
        async def run(client):
            await client.call_tool("echo", {"m": "recorded"})

        session(mcp_cassette.url, run)


@pytest.mark.mcp_cassette("cassettes/tools.stdio.jsonl", fail_on_unused=True)
def test_a_stdio_command_carries_the_flag(mcp_cassette):
    assert mcp_cassette.command[-1] == "--fail-on-unused"
