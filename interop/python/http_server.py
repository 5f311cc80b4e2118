"""An MCP server on the official Python SDK (mcp 2.x, MCPServer) over Streamable HTTP, for the
HTTP client's interop tests. It serves both eras the SDK speaks; in the 2026-07-28 era the SDK
checks the `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` headers of every request against its
body, so a client that sends them wrong is refused.

Usage: http_server.py <port>   (serves http://127.0.0.1:<port>/mcp)
"""

import sys
from typing import Annotated

from pydantic import Field

from mcp.server.mcpserver import MCPServer

server = MCPServer("py-http")


@server.tool()
def echo(message: str) -> str:
    """Echoes the message back."""
    return f"echo:{message}"


@server.tool()
def forecast(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    days: int = 1,
) -> str:
    """Forecast for a region; the region travels in the Mcp-Param-Region header too."""
    return f"sunny in {region} for {days} day(s)"


@server.prompt()
def greet(name: str) -> str:
    """A greeting prompt."""
    return f"Say hello to {name}."


@server.resource("note://readme")
def readme() -> str:
    """A short note."""
    return "This is the readme."


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
