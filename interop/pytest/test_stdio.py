import os

import pytest

from conftest import session
from pytest_mcp_cassette import CassetteHandleError

pytestmark = pytest.mark.mcp_cassette("cassettes/tools.stdio.jsonl", volatile=["/arguments/runId"])

HERE = os.path.dirname(os.path.abspath(__file__))


def test_hands_back_the_command(mcp_cassette):
    assert mcp_cassette.command == [
        os.environ["MCP_CASSETTE_BINARY"],
        "replay",
        os.path.join(HERE, "cassettes/tools.stdio.jsonl"),
        "--volatile",
        "/arguments/runId",
    ]


def test_is_spawned_by_the_sdk_client(mcp_cassette):
    async def run(client):
        echo = await client.call_tool("echo", {"m": "recorded"})
        stamp = await client.call_tool(
            "stamp", {"m": "hi", "requestedAt": "now", "runId": "run-2"})
        return echo.content[0].text, stamp.content[0].text

    assert session(mcp_cassette.command, run) == ("recorded", "stamped")


def test_has_no_url_and_no_server(mcp_cassette):
    with pytest.raises(CassetteHandleError,
                       match=r"is a stdio cassette; spawn \.command instead of connecting to \.url"):
        mcp_cassette.url
    with pytest.raises(CassetteHandleError, match=r"is a stdio cassette"):
        mcp_cassette.server


@pytest.mark.mcp_cassette("cassettes/tools.stdio.jsonl", volatile=["/arguments/runId"],
                          redact_config="cassettes/redact.json")
def test_passes_the_redaction_config_after_the_declarations(mcp_cassette):
    assert mcp_cassette.command[3:] == [
        "--volatile",
        "/arguments/runId",
        "--redact-config",
        os.path.join(HERE, "cassettes/redact.json"),
    ]
