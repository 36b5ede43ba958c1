"""Drives the example `mcp_server` binary with the official Python MCP SDK (`mcp` on PyPI).

Usage: python mcp_client.py PATH_TO_MCP_SERVER

Connects over stdio twice (the SDK's default 'auto' negotiation and the 'legacy' initialize
handshake), lists the tools and calls them; prints one JSON object on stdout that the Rust
test `tests/tests/mcp_python.rs` checks. Keeps assertions out of here so a failure shows up
there, next to the expectation.
"""

import asyncio
import json
import sys

from mcp import Client, MCPError, StdioServerParameters

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


async def main() -> None:
    server = sys.argv[1]
    report = {mode: await session(server, mode) for mode in ("auto", "legacy")}
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main())
