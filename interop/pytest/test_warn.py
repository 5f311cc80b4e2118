import pytest
from mcp.shared.exceptions import MCPError

from conftest import session


@pytest.mark.mcp_cassette("cassettes/tools.http.jsonl", on_miss="warn")
class TestWarn:
    def test_leaves_the_error_as_the_only_signal(self, mcp_cassette):
        async def run(client):
            with pytest.raises(MCPError, match="no recorded response"):
                await client.call_tool("echo", {"m": "drifted"})

        session(mcp_cassette.url, run)

    def test_still_answers_recorded_calls(self, mcp_cassette):
        async def run(client):
            return (await client.call_tool("echo", {"m": "recorded"})).content[0].text

        assert session(mcp_cassette.url, run) == "recorded"
