"""Drives loom with the Python MCP SDK client and prints what it saw as one JSON object.

Usage: client_check.py LOOM_BINARY CONFIG MODE   (stdio; MODE: auto | legacy)
       client_check.py --http URL TOKEN MODE     (streamable HTTP with a bearer token)
"""
import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


def server():
    if sys.argv[1] == "--http":
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        url, token, mode = sys.argv[2], sys.argv[3], sys.argv[4]
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        return streamable_http_client(url, http_client=http), mode
    loom, config, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    return StdioServerParameters(command=loom, args=["serve", "-c", config]), mode


async def main():
    params, mode = server()
    progress = []
    out = {}

    async def on_progress(p, total, message):
        progress.append([p, total, message])

    async with Client(params, mode=mode) as c:
        out["protocol_version"] = str(c.protocol_version)
        tools = await c.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        r = await c.call_tool("sample_get_weather", {"city": "Lima"})
        out["weather"] = r.content[0].text
        r = await c.call_tool("sample_slow_count", {"steps": 3, "delay_ms": 20}, progress_callback=on_progress)
        out["count"] = r.content[0].text
        out["progress"] = progress
        r = await c.call_tool("sample_list_customers", {"limit": 3})
        out["customers"] = json.loads(r.content[0].text)["total"]
        r = await c.call_tool("sample_list_orders", {"limit": 1000})
        out["orders"] = r.structured_content
        prompts = await c.list_prompts()
        out["prompts"] = [p.name for p in prompts.prompts]
        res = await c.read_resource("sample://docs/readme")
        out["readme"] = res.contents[0].text
    print(json.dumps(out))


asyncio.run(main())
