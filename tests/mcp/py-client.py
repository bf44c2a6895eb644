"""Drives `mcpflow serve` over stdio with the Python MCP SDK 2.x client (protocol 2026-07-28).

Env: MCPFLOW_BIN (the mcpflow binary), SERVERS_FILE (an mcpServers file naming `echo`),
MCPFLOW_HOME. Prints one line per check and `all checks passed` at the end; exits 1 on
the first failed check.
"""

import asyncio
import os
import sys

from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters


def check(ok: bool, what: str) -> None:
    print(("ok - " if ok else "not ok - ") + what, flush=True)
    if not ok:
        sys.exit(1)


async def main() -> None:
    params = StdioServerParameters(
        command=os.environ["MCPFLOW_BIN"],
        args=["serve", "--servers", os.environ["SERVERS_FILE"], "--allow-all-servers"],
        env=dict(os.environ),
    )
    async with Client(params) as client:
        # The client probes `server/discover` first: an answer means the 2026-07-28 era.
        check(client.protocol_version == "2026-07-28", f"era: {client.protocol_version}")
        tools = await client.list_tools()
        names = sorted(tool.name for tool in tools.tools)
        check("run_pipeline" in names and "list_tools" in names, f"tools/list: {len(names)} tools")
        # A tools/call through mcpflow to the downstream echo server (itself 2026-07-28).
        result = await client.call_tool("list_tools", {"server": "echo"})
        check(not result.is_error, "list_tools answered")
        text = "".join(getattr(item, "text", "") for item in result.content)
        check('"echo"' in text, "list_tools reaches the downstream echo server")
    print("all checks passed", flush=True)


asyncio.run(main())
