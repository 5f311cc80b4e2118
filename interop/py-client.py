"""A scripted MCP client built on the official Python SDK (mcp 2.x).

Drives one fixed scenario against the stdio server command it is given and prints what it saw
as JSON, so a test can compare a direct session with one through `mcp-cassette record` or
against a replay.

usage: python py-client.py <scenario> <mode> -- <server command...>
       python py-client.py <scenario> <mode> -- <http(s) URL>   (Streamable HTTP)
  mode: legacy | auto (auto probes server/discover first, then falls back to initialize)
"""

import json
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def dump(value):
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


async def main() -> None:
    args = sys.argv[1:]
    sep = args.index("--")
    scenario, mode = args[0], args[1]
    command, *command_args = args[sep + 1 :]
    logs: list[str] = []

    async def on_log(params) -> None:
        logs.append(params.level)

    if command.startswith(("http://", "https://")) and not command_args:
        server = command  # the SDK's Client takes a URL as a Streamable HTTP endpoint
    else:
        server = StdioServerParameters(command=command, args=command_args)
    out: dict = {"steps": []}
    async with Client(server, mode=mode, logging_callback=on_log) as client:

        async def step(name, fn):
            try:
                out["steps"].append({"name": name, "result": dump(await fn())})
            except Exception as e:  # the error text is part of what is compared
                out["steps"].append({"name": name, "error": str(e)})

        if scenario == "everything":
            async def tool_names():
                return sorted(t.name for t in (await client.list_tools()).tools)

            await step("tools/list", tool_names)
            await step("echo", lambda: client.call_tool("echo", {"message": "hello from python"}))
            await step("sum", lambda: client.call_tool("get-sum", {"a": 20, "b": 22}))
            await step("prompt", lambda: client.get_prompt("simple-prompt", {}))
            await step("unknown-tool", lambda: client.call_tool("no-such-tool", {}))
        elif scenario == "tiny":
            async def tool_names():
                return sorted(t.name for t in (await client.list_tools()).tools)

            await step("tools/list", tool_names)
            await step("echo", lambda: client.call_tool("echo", {"message": "hi"}))
            await step("add", lambda: client.call_tool("add", {"a": 2, "b": 3}))
        else:
            print(f"unknown scenario {scenario}", file=sys.stderr)
            sys.exit(2)
    out["logs"] = logs
    print(json.dumps(out, indent=2, sort_keys=True))


anyio.run(main)
