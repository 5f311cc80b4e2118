"""An MCP server on the official Python SDK whose tool arguments are Pydantic models, so its
input schemas put the contract under `$defs` and point at it with `$ref` — the shape the
contract gate has to survive.

Environment switches (for the contract tests):
  PYDANTIC_SERVER_DEFS_CHANGE=1  change only a `$defs` member: `User.age` becomes a string.
  PYDANTIC_SERVER_RELAX=1        also relax the root: `register`'s `tag` gets a default, so it
                                 is no longer required (a minor change beside the breaking one).
"""

import os

from pydantic import BaseModel

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server

DEFS_CHANGE = os.environ.get("PYDANTIC_SERVER_DEFS_CHANGE") == "1"
RELAX = os.environ.get("PYDANTIC_SERVER_RELAX") == "1"

server = Server("py-pydantic")


class Address(BaseModel):
    street: str
    city: str


if DEFS_CHANGE:

    class User(BaseModel):
        name: str
        age: str
        address: Address

else:

    class User(BaseModel):
        name: str
        age: int
        address: Address


if RELAX:

    @server.tool()
    def register(user: User, tag: str = "default") -> str:
        """Registers a user."""
        return f"registered {user.name} ({tag})"

else:

    @server.tool()
    def register(user: User, tag: str) -> str:
        """Registers a user."""
        return f"registered {user.name} ({tag})"


@server.tool()
def lookup(address: Address) -> str:
    """Finds who lives at an address."""
    return f"nobody at {address.street}, {address.city}"


if __name__ == "__main__":
    server.run()
