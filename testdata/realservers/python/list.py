"""A real MCP client listing a server's whole surface: the official Python SDK (`mcp`, pinned
with hashes in client.txt).

    python list.py COMMAND [ARGS...]

Starts COMMAND as a stdio MCP server (directly, or mcppin-guard in front of one), lists its
tools, prompts and resource templates (each list only when the server declares its capability)
and prints one JSON line: the server's name, each list as sorted names or keys, or the error
the SDK raised for it; the same line as testdata/sdk-client/list.mjs prints.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError


def failure(error):
    code = getattr(getattr(error, "error", None), "code", None)
    message = getattr(getattr(error, "error", None), "message", None) or str(error)
    return {"error": {"code": code, "message": message}}


async def main():
    command, *args = sys.argv[1:]
    server = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    summary = {}
    with open(os.devnull, "w") as quiet:
        async with stdio_client(server, errlog=quiet) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                summary["server"] = init.serverInfo.name
                offered = init.capabilities

                async def listed(capability, read_list, pick):
                    if getattr(offered, capability) is None:
                        return None
                    try:
                        return sorted(pick(await read_list()))
                    except McpError as error:
                        return failure(error)

                summary["tools"] = await listed(
                    "tools", session.list_tools, lambda r: [t.name for t in r.tools]
                )
                summary["prompts"] = await listed(
                    "prompts", session.list_prompts, lambda r: [p.name for p in r.prompts]
                )
                summary["resource_templates"] = await listed(
                    "resources",
                    session.list_resource_templates,
                    lambda r: [t.uriTemplate for t in r.resourceTemplates],
                )
    print(json.dumps(summary, separators=(",", ":")))


asyncio.run(main())
