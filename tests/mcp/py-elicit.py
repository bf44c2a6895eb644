"""People in the loop through `mcpflow serve` for a 2026-07-28 client: the Python MCP SDK
2.x client, with an elicitation callback, calls `run_workflow`; the era forbids
server-to-client requests, so mcpflow answers `input_required` with the run's questions
as elicitation requests, the SDK asks the callback and retries with the answers (and
mcpflow's `requestState`), and the run goes on to its end: server-everything's
`trigger-elicitation-request` (a form) and `trigger-url-elicitation` (a URL) and an
`input` step, each answered in its own round.

Env: MCPFLOW_BIN, MCPFLOW_HOME, SERVERS_FILE (an mcpServers file naming `everything`).
Prints one line per check and `all checks passed` at the end; exits 1 on the first
failed check.
"""

import asyncio
import json
import os
import sys

from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import ElicitRequestURLParams, ElicitResult


def check(ok: bool, what: str) -> None:
    print(("ok - " if ok else "not ok - ") + what, flush=True)
    if not ok:
        sys.exit(1)


VERIFY_URL = "https://example.com/verify-mcpflow"
BLUEPRINT = {
    "blueprint": 1,
    "id": "people-2026",
    "steps": [
        {"id": "form", "kind": "tool", "server": "everything", "tool": "trigger-elicitation-request", "args": {}},
        {
            "id": "url",
            "kind": "tool",
            "server": "everything",
            "tool": "trigger-url-elicitation",
            "args": {"url": VERIFY_URL, "message": "Open the page to verify"},
        },
        {"id": "count", "kind": "input", "prompt": "How many copies?", "schema": {"type": "integer"}},
    ],
    "output": {"form": "{{ form }}", "url": "{{ url }}", "count": "{{ count }}"},
}

asked = []


async def answer(context, params):
    asked.append(params)
    if isinstance(params, ElicitRequestURLParams):
        return ElicitResult(action="accept")
    props = params.requested_schema.get("properties", {})
    if "name" in props:
        return ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True})
    if "value" in props:
        return ElicitResult(action="accept", content={"value": 7})
    return ElicitResult(action="decline")


async def main() -> None:
    params = StdioServerParameters(
        command=os.environ["MCPFLOW_BIN"],
        args=["serve", "--servers", os.environ["SERVERS_FILE"], "--allow-all-servers"],
        env=dict(os.environ),
    )
    async with Client(params, elicitation_callback=answer) as client:
        check(client.protocol_version == "2026-07-28", f"era: {client.protocol_version}")
        result = await client.call_tool("run_workflow", {"blueprint": BLUEPRINT})
        text = "".join(getattr(item, "text", "") for item in result.content)
        check(not result.is_error, f"run_workflow succeeded after the input_required rounds: {text[:600]}")
        envelope = json.loads(text)
        check(envelope["status"] == "succeeded", f"status {envelope['status']}")
        output = json.dumps(envelope["output"])
        check("Name: Ada Lovelace" in output, "the form answer reached trigger-elicitation-request's output")
        check("User completed the URL elicitation flow" in output, "the URL answer reached trigger-url-elicitation")
        check(envelope["output"]["count"] == 7, "the input step's answer is its output")
        urls = [p for p in asked if isinstance(p, ElicitRequestURLParams)]
        forms = [p for p in asked if not isinstance(p, ElicitRequestURLParams)]
        check(len(urls) == 1 and urls[0].url == VERIFY_URL, f"the URL question came with its URL: {urls}")
        check(
            any(p.message == "Please provide inputs for the following fields:" for p in forms),
            "the server's form came with its message",
        )
        check(len(asked) == 3, f"three questions, one per round: {len(asked)}")
    # A 2026-07-28 client without an elicitation callback: INPUT_REQUIRED, then answer_run.
    plain = StdioServerParameters(
        command=os.environ["MCPFLOW_BIN"],
        args=["serve", "--servers", os.environ["SERVERS_FILE"], "--allow-all-servers"],
        env={**os.environ, "MCPFLOW_HOME": os.environ["MCPFLOW_HOME"] + "-plain"},
    )
    async with Client(plain) as client:
        only = {**BLUEPRINT, "steps": [BLUEPRINT["steps"][2]], "output": "{{ count }}"}
        result = await client.call_tool("run_workflow", {"blueprint": only})
        error = json.loads("".join(getattr(item, "text", "") for item in result.content))["error"]
        check(result.is_error and error["code"] == "INPUT_REQUIRED", f"without elicitation: {error['code']}")
        check("step `count`" in error["message"] and "value (required)" in error["message"], error["message"])
        answered = await client.call_tool(
            "answer_run",
            {"run_id": error["run_id"], "answer": {"action": "accept", "content": {"value": 5}}},
        )
        done = json.loads("".join(getattr(item, "text", "") for item in answered.content))
        check(done.get("status") == "succeeded" and done.get("output") == 5, f"answer_run finished the run: {done}")
    print("all checks passed", flush=True)


asyncio.run(main())
