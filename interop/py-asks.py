"""A Python SDK (mcp 2.x) client that answers the server's own requests: sampling, elicitation and
roots. Used to record a cassette holding such requests and to replay it (see docs/replay.md,
"Requests from the server").

usage: python py-asks.py <answers> -- <server command...>
       python py-asks.py <answers> -- <http(s) URL>   (Streamable HTTP)
  answers: same      declares every capability and answers as recorded
           different declares every capability and answers otherwise
           none      declares no capability (the server must not ask)

Prints what it saw as JSON: the steps, and the server requests it answered.
"""

import json
import sys

import anyio
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters


def dump(value):
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


async def main() -> None:
    args = sys.argv[1:]
    sep = args.index("--")
    answers = args[0]
    command, *command_args = args[sep + 1 :]
    if command.startswith(("http://", "https://")) and not command_args:
        server = command
    else:
        server = StdioServerParameters(command=command, args=command_args)
    asked: list[str] = []
    text = "a recorded answer" if answers == "same" else "a different answer"

    async def sampling(context, params) -> types.CreateMessageResult:
        asked.append("sampling/createMessage")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=text),
            model="test-model",
            stop_reason="endTurn",
        )

    async def elicitation(context, params) -> types.ElicitResult:
        asked.append("elicitation/create")
        return types.ElicitResult(action="accept", content={"name": text, "check": True})

    async def roots(context) -> types.ListRootsResult:
        asked.append("roots/list")
        return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/project", name=text)])

    callbacks = {}
    if answers != "none":
        callbacks = {
            "sampling_callback": sampling,
            "elicitation_callback": elicitation,
            "list_roots_callback": roots,
        }
    out: dict = {"steps": []}
    async with Client(server, mode="legacy", **callbacks) as client:

        async def step(name, fn):
            try:
                out["steps"].append({"name": name, "result": dump(await fn())})
            except Exception as e:  # the error text is part of what is compared
                out["steps"].append({"name": name, "error": str(e)})

        await step("sampling", lambda: client.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": 5}))
        await step("elicitation", lambda: client.call_tool("trigger-elicitation-request", {}))
        await step("echo", lambda: client.call_tool("echo", {"message": "after the asks"}))
    out["asked"] = asked
    print(json.dumps(out, sort_keys=True))


anyio.run(main)
