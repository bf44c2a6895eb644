"""A stdio MCP server on the Python SDK `mcp` 2.x whose tool asks the person for input, for
mcpflow's tests of both eras of elicitation: at 2026-07-28 the SDK answers the call with an
`input_required` result (multi round-trip: the client retries with `inputResponses` and the
echoed `requestState`); at 2025-11-25 it sends a standalone `elicitation/create` mid-call.

Tools: `deploy(service)` asks "Which cluster?" (a form with `cluster` and `replicas`) and
returns what was answered; `count_calls` says how many times `deploy`'s body ran to its end.
"""

from typing import Annotated

from pydantic import BaseModel

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve

server = MCPServer("ask-py")
finished = 0


class Target(BaseModel):
    cluster: str
    replicas: int = 1


def ask_target(service: str) -> Elicit[Target]:
    return Elicit(f"Where should {service} be deployed?", Target)


@server.tool()
def deploy(service: str, target: Annotated[Target, Resolve(ask_target)]) -> str:
    """Deploys a service where the person says."""
    global finished
    finished += 1
    return f"deployed {service} to {target.cluster} x{target.replicas}"


@server.tool()
def count_calls() -> int:
    """How many deploys finished."""
    return finished


if __name__ == "__main__":
    server.run("stdio")
