"""A small MCP server on the official Python SDK (mcp 2.x, MCPServer), for interop tests.

It serves both protocol eras the SDK speaks, so a 2026-07-28 client records a modern session.
"""

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("py-tiny")


@server.tool()
def echo(message: str) -> str:
    """Echoes the message back."""
    return f"echo:{message}"


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Counts to `steps`, reporting progress and logging each step."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps)
        await ctx.info(f"step {i + 1}")
    return f"counted {steps}"


@server.prompt()
def greet(name: str) -> str:
    """A greeting prompt."""
    return f"Say hello to {name}."


@server.resource("note://readme")
def readme() -> str:
    """A short note."""
    return "This is the readme."


if __name__ == "__main__":
    server.run("stdio")
