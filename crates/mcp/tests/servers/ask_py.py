"""A stdio MCP server on the Python SDK `mcp` 2.x whose tool asks the person for input, for
mcpflow's tests of both eras of elicitation: at 2026-07-28 the SDK answers the call with an
`input_required` result (multi round-trip: the client retries with `inputResponses` and the
echoed `requestState`); at 2025-11-25 it sends a standalone `elicitation/create` mid-call.

Tools: `deploy(service)` asks "Which cluster?" (a form with `cluster` and `replicas`) and
returns what was answered; `count_calls` says how many times `deploy`'s body ran to its end;
`haiku(topic)` asks the client's model for a haiku (sampling; at 2026-07-28 inside the
`input_required` result) and returns its text; `survey` asks 17 questions at once.
"""

from typing import Annotated

from pydantic import BaseModel

from mcp_types import CreateMessageResult, SamplingMessage, TextContent

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve, Sample

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


def ask_model(topic: str) -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(text=f"Write a haiku about {topic}."))],
        max_tokens=60,
        system_prompt="You are a poet.",
    )


@server.tool()
def haiku(topic: str, poem: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """A haiku about the topic, from the client's model."""
    content = poem.content
    return content.text if isinstance(content, TextContent) else str(content)


class Answer(BaseModel):
    value: str


def _ask(n: int):
    def ask() -> Elicit[Answer]:
        return Elicit(f"Question {n}?", Answer)

    return ask


# `survey`: 17 questions at once (one `input_required` result with 17 requests at 2026-07-28),
# more than a client should put to a person in one go.
_params = ", ".join(f"a{n}: Annotated[Answer, Resolve(_ask({n}))]" for n in range(17))
exec(f"def survey({_params}) -> str:\n    return 'answered'", globals())
survey.__doc__ = "Asks 17 questions at once."
server.tool()(survey)


@server.tool()
def count_calls() -> int:
    """How many deploys finished."""
    return finished


if __name__ == "__main__":
    server.run("stdio")
