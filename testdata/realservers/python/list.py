"""A real MCP client listing a server's whole surface: the official Python SDK (`mcp`, pinned
with hashes in client.txt).

    python list.py COMMAND [ARGS...]

Starts COMMAND as a stdio MCP server (directly, or mcppin-guard in front of one), lists its
tools, prompts and resource templates (each list only when the server declares its capability)
and prints one JSON line: the server's name, each list as sorted names or keys, or the error
the SDK raised for it; the same line as testdata/sdk-client/list.mjs prints.

A server may register items after initialize and announce them with a
`notifications/*/list_changed` (server-everything does). So the lists are read again until two
readings in a row agree and no list_changed arrived since the first of them began; that reading
is printed. A surface that has not settled after READINGS readings is never reduced to one of
them: the line then holds `unsettled` with every reading, and the caller fails on it.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

READINGS = 5


def failure(error):
    code = getattr(getattr(error, "error", None), "code", None)
    message = getattr(getattr(error, "error", None), "message", None) or str(error)
    return {"error": {"code": code, "message": message}}


async def main():
    command, *args = sys.argv[1:]
    server = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    summary = {}
    changes = 0

    async def count_list_changed(message):
        nonlocal changes
        if isinstance(message, types.ServerNotification) and message.root.method.endswith(
            "/list_changed"
        ):
            changes += 1

    with open(os.devnull, "w") as quiet:
        async with stdio_client(server, errlog=quiet) as (read, write):
            async with ClientSession(
                read, write, message_handler=count_list_changed
            ) as session:
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

                async def reading():
                    return {
                        "tools": await listed(
                            "tools", session.list_tools, lambda r: [t.name for t in r.tools]
                        ),
                        "prompts": await listed(
                            "prompts",
                            session.list_prompts,
                            lambda r: [p.name for p in r.prompts],
                        ),
                        "resource_templates": await listed(
                            "resources",
                            session.list_resource_templates,
                            lambda r: [t.uriTemplate for t in r.resourceTemplates],
                        ),
                    }

                # Each reading with the count of list_changed seen before it began.
                readings = [(changes, await reading())]
                while True:
                    readings.append((changes, await reading()))
                    (before, earlier), (_, later) = readings[-2:]
                    if earlier == later and changes == before:
                        summary.update(later)
                        break
                    if len(readings) == READINGS:
                        summary["unsettled"] = [lists for _, lists in readings]
                        break
                # A last round trip: what the server sent before its answer is read before the
                # session closes (the SDK's reader fails on a message that arrives after).
                await session.send_ping()
    print(json.dumps(summary, separators=(",", ":")))


asyncio.run(main())
