"""A stdio MCP server built on the Python SDK `mcp` 2.x (protocol 2026-07-28), for mcpflow's tests.

It answers `server/discover` (the 2026-07-28 era) and, like every server of that SDK,
still answers an `initialize` from a 2025-11-25 client. Tools: `shout`, `era` (the protocol
version the request came in), `announce` (a flood of tool-list changes), and `add_whisper`,
which adds a `whisper` tool and announces it — at 2026-07-28 only on the client's
`subscriptions/listen` stream.

`python modern_py.py` serves stdio; `python modern_py.py http PORT` serves streamable HTTP
on 127.0.0.1:PORT at `/mcp`.
"""

import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("modern-py")


@server.tool()
def shout(text: str) -> str:
    """Returns the text in capitals."""
    return text.upper()


@server.tool()
def era(ctx: Context) -> str:
    """Returns the protocol version this request was made in."""
    return ctx.protocol_version or "unknown"


def whisper(text: str) -> str:
    """Returns the text in small letters."""
    return text.lower()


@server.tool()
async def add_whisper(ctx: Context) -> str:
    """Adds the `whisper` tool and announces that the tool list changed."""
    server.add_tool(whisper)
    await ctx.notify_tools_changed()
    return "added"


@server.tool()
async def announce(ctx: Context, times: int) -> str:
    """Announces `times` tool-list changes without changing anything (a flood)."""
    for _ in range(times):
        await ctx.notify_tools_changed()
    return "announced"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
