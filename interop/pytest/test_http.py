import json
import urllib.request

import pytest

from conftest import record_pid, session
from pytest_mcp_cassette import CassetteHandleError


@pytest.mark.mcp_cassette("cassettes/tools.http.jsonl")
def test_the_sdk_client_gets_the_recorded_session(mcp_cassette):
    async def run(client):
        tools = await client.list_tools()
        result = await client.call_tool("echo", {"m": "recorded"})
        return [t.name for t in tools.tools], result.content[0].text

    assert session(mcp_cassette.url, run) == (["echo", "stamp"], "recorded")


@pytest.mark.mcp_cassette("../adapters/cassettes/echo.http.jsonl")
def test_a_plain_post_gets_a_recorded_answer(mcp_cassette):
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"m": "recorded"}}}
    request = urllib.request.Request(
        mcp_cassette.url, data=json.dumps(body).encode(), method="POST",
        headers={"content-type": "application/json",
                 "accept": "application/json, text/event-stream"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as response:
        answer = json.load(response)
    assert answer == {"jsonrpc": "2.0", "id": 7,
                      "result": {"content": [{"type": "text", "text": "recorded"}]}}


@pytest.mark.mcp_cassette("cassettes/tools.http.jsonl")
def test_an_http_cassette_has_no_command(mcp_cassette):
    with pytest.raises(CassetteHandleError,
                       match=r"is an http cassette; connect to \.url instead of spawning \.command"):
        mcp_cassette.command
    assert mcp_cassette.transport == "http"
    assert mcp_cassette.file.endswith("cassettes/tools.http.jsonl")


@pytest.mark.mcp_cassette("cassettes/tools.http.jsonl")
def test_the_server_describes_its_process(mcp_cassette):
    server = mcp_cassette.server
    assert server.url == mcp_cassette.url
    assert server.url.startswith("http://127.0.0.1:")
    assert isinstance(server.pid, int)
    assert server.misses() == 0
    record_pid(server.pid)
