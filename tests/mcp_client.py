"""Drives the example `mcp_server` binary with the official Python MCP SDK (`mcp` on PyPI).

Usage: python mcp_client.py PATH_TO_MCP_SERVER
       python mcp_client.py http://127.0.0.1:PORT/mcp TOOL...

Connects over stdio twice (the SDK's default 'auto' negotiation and the 'legacy' initialize
handshake), lists the tools and calls them; prints one JSON object on stdout that the Rust
test `tests/tests/mcp/python_client.rs` checks. Keeps assertions out of here so a failure shows
up there, next to the expectation.

Given a URL instead, connects over Streamable HTTP, lists the tools and calls each TOOL named
after it without arguments, reporting the SDK's class for every content block it receives (or
the SDK's refusal, when the structured content does not match the tool's output schema).

Usage: python mcp_client.py interact http://127.0.0.1:PORT/mcp

Connects over Streamable HTTP with sampling and elicitation callbacks (answering "Four." and a
fixed profile), once per negotiation mode, calls `ask__sample` and `ask__profile`, and reports
the results and what the server asked.

Usage: python mcp_client.py approve http://127.0.0.1:PORT/mcp

Calls `shop__refund` once per negotiation mode and approves it in the elicitation callback
when the server asks; reports the results and what the server asked.
"""

import asyncio
import json
import sys

from mcp import Client, MCPError, StdioServerParameters, types

CALLS = [
    ("time", "core__get_current_time", {"timezone": "Europe/Berlin"}),
    ("search", "docs__search", {"query": "schema", "limit": 2}),
    ("ticket", "tickets__create_ticket", {"title": "Search ignores tags", "body": "", "priority": "high"}),
    ("urgent", "tickets__create_ticket", {"title": "Production is down", "body": "", "priority": "urgent"}),
    ("invalid", "docs__search", {"query": "", "limit": 50}),
    ("unknown", "shell__exec", {"command": "true"}),
    ("hidden", "tickets__close_ticket", {"number": 1}),
]


def dump(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def session(server: str, mode: str) -> dict:
    params = StdioServerParameters(command=server, args=[])
    out: dict = {"calls": {}}
    async with Client(params, mode=mode) as client:
        out["protocol_version"] = client.protocol_version
        listed = await client.list_tools()
        out["tools"] = [dump(tool) for tool in listed.tools]
        for label, name, arguments in CALLS:
            try:
                result = await client.call_tool(name, arguments)
                out["calls"][label] = {"result": dump(result)}
            except MCPError as error:
                out["calls"][label] = {"error": {"code": error.code, "message": error.message}}
    return out


async def http_session(url: str, tools: list[str]) -> dict:
    out: dict = {"calls": {}}
    async with Client(url) as client:
        listed = await client.list_tools()
        out["tools"] = [dump(tool) for tool in listed.tools]
        for name in tools:
            try:
                # The SDK checks `structuredContent` against the listed `outputSchema`.
                result = await client.call_tool(name, {})
            except RuntimeError as error:
                out["calls"][name] = {"invalid": str(error)}
                continue
            out["calls"][name] = {
                "classes": [type(block).__name__ for block in result.content],
                "result": dump(result),
            }
    return out


async def interact_session(url: str, mode: str) -> dict:
    asked: list = []

    async def sampling(context, params):
        asked.append({"kind": "sampling", "params": dump(params)})
        return types.CreateMessageResult.model_validate(
            {"role": "assistant", "content": {"type": "text", "text": "Four."}, "model": "py-model", "stopReason": "endTurn"}
        )

    async def elicitation(context, params):
        asked.append({"kind": "elicitation", "params": dump(params)})
        return types.ElicitResult.model_validate({"action": "accept", "content": {"name": "Ada", "color": "blue"}})

    out: dict = {"calls": {}, "asked": asked}
    async with Client(url, mode=mode, sampling_callback=sampling, elicitation_callback=elicitation) as client:
        out["protocol_version"] = client.protocol_version
        for name, arguments in [("ask__sample", {"prompt": "What is 2 + 2?"}), ("ask__profile", {})]:
            try:
                out["calls"][name] = {"result": dump(await client.call_tool(name, arguments))}
            except MCPError as error:
                out["calls"][name] = {"error": {"code": error.code, "message": error.message}}
    return out


async def approve_session(url: str, mode: str) -> dict:
    """Calls `shop__refund`, whose approval the server asks for (an input-required round on
    2026-07-28, an elicitation within the call before), and approves it in the elicitation
    callback."""
    asked: list = []

    async def elicitation(context, params):
        asked.append(dump(params))
        return types.ElicitResult.model_validate({"action": "accept", "content": {"approve": True}})

    out: dict = {"asked": asked}
    async with Client(url, mode=mode, elicitation_callback=elicitation) as client:
        out["protocol_version"] = client.protocol_version
        try:
            out["result"] = dump(await client.call_tool("shop__refund", {"order": "A-17", "cents": 500}))
        except MCPError as error:
            out["error"] = {"code": error.code, "message": error.message}
    return out


async def main() -> None:
    server = sys.argv[1]
    if server == "approve":
        report = {mode: await approve_session(sys.argv[2], mode) for mode in ("auto", "legacy")}
        print(json.dumps(report))
        return
    if server == "interact":
        report = {mode: await interact_session(sys.argv[2], mode) for mode in ("auto", "legacy")}
        print(json.dumps(report))
        return
    if server.startswith("http"):
        print(json.dumps(await http_session(server, sys.argv[2:])))
        return
    report = {mode: await session(server, mode) for mode in ("auto", "legacy")}
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main())
