# The official MCP Python SDK's Client against our endpoint, for test/external/mcp-python-sdk.test.ts:
# connects in the given mode (legacy: the initialize handshake; auto: server/discover), lists the
# tools, searches, reads a note by tool and as a resource, and prints what it saw as one JSON line.
# Usage: python mcp-python-client.py URL TOKEN MAPPING_ID MODE QUERY PATH
import asyncio
import json
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main(url: str, token: str, mapping_id: str, mode: str, query: str, path: str) -> None:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        tools = await client.list_tools()
        search = await client.call_tool("search_notes", {"mappingId": mapping_id, "query": query})
        read = await client.call_tool("get_note_content", {"mappingId": mapping_id, "path": path})
        links = [block.uri for block in search.content if block.type == "resource_link"]
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        note = next(r for r in resources.resources if r.name == path)
        contents = await client.read_resource(note.uri)
        server = client.server_info
        print(
            json.dumps(
                {
                    "protocolVersion": client.protocol_version,
                    "server": server.model_dump(mode="json", exclude_none=True) if server else None,
                    "tools": [{"name": t.name, "title": t.title, "hasOutputSchema": t.output_schema is not None} for t in tools.tools],
                    "searchError": bool(search.is_error),
                    "searchPaths": sorted(r["path"] for r in (search.structured_content or {}).get("results", [])),
                    "searchLinks": sorted(str(link) for link in links),
                    "read": read.structured_content,
                    "templates": [t.uri_template for t in templates.resource_templates],
                    "resource": {
                        "uri": str(note.uri),
                        "contents": [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in contents.contents],
                    },
                }
            )
        )


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:7]))
