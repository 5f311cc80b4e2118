import uuid
from datetime import datetime, timezone

import pytest

from conftest import session


def stamp(client):
    return client.call_tool("stamp", {
        "m": "hi",
        "requestedAt": datetime.now(timezone.utc).isoformat(),
        "runId": f"run-{uuid.uuid4()}",
    })


@pytest.mark.mcp_cassette("cassettes/tools.http.jsonl", volatile=["tools/call:/arguments/runId"])
def test_a_declared_field_may_change(mcp_cassette):
    async def run(client):
        return (await stamp(client)).content[0].text

    assert session(mcp_cassette.url, run) == "stamped"


@pytest.mark.mcp_cassette("cassettes/tools.http.jsonl")
def test_an_undeclared_field_misses(mcp_cassette):
    async def run(client):
        try:
            await stamp(client)
        except Exception:
            pass

    session(mcp_cassette.url, run)


@pytest.mark.mcp_cassette("cassettes/tools.http.jsonl", volatile=["arguments/runId"])
def test_a_malformed_declaration_fails_naming_it(mcp_cassette):
    pass
