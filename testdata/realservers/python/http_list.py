"""A real MCP client over Streamable HTTP: the official Python SDK (`mcp`, pinned with hashes
in client.txt).

    python http_list.py URL

Connects to URL (a server, or mcppin-guard --listen in front of one), lists its tools and
prints one JSON line: each tool as its name and description, as the SDK read them, or the
error the SDK raised.
"""

import asyncio
import json
import sys
from datetime import timedelta

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


async def main(url):
    summary = {}
    try:
        async with streamablehttp_client(url, timeout=10, sse_read_timeout=10) as (read, write, _):
            async with ClientSession(read, write, read_timeout_seconds=timedelta(seconds=10)) as session:
                await session.initialize()
                listed = await session.list_tools()
                summary["tools"] = [[t.name, t.description] for t in listed.tools]
    except BaseException as error:  # the SDK raises ExceptionGroups from its task group
        summary["error"] = f"{type(error).__name__}: {error}"
    print(json.dumps(summary, separators=(",", ":")))


asyncio.run(main(sys.argv[1]))
