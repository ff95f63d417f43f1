"""Drives loom with the Python MCP SDK client and prints what it saw as one JSON object.

Usage: client_check.py LOOM_BINARY CONFIG MODE   (stdio; MODE: auto | legacy)
       client_check.py --find MODE --http URL TOKEN | --find MODE --stdio COMMAND ARGS...
           (a model in a search listing: finds a tool with loom_find_tools, calls it with
           loom_call, sees it promoted into the listing, calls a hidden tool by name)
       client_check.py --http URL TOKEN MODE     (streamable HTTP with a bearer token)
       client_check.py --flow URL TOKEN MODE   (streamable HTTP: data from tool to tool, a
           parked log bound into a note with loom_call and a loom_call_each batch with progress)
       client_check.py --http-plan URL TOKEN MODE PLAN
           (streamable HTTP; MODE: legacy | auto | 2026-07-28; PLAN is a file holding the
           JSON plan that tests/js/client_check.mjs also runs: per server a call with
           progress, a call the client cancels after its first progress notification, and a
           large call whose envelope is queried with loom_query)
"""
import asyncio
import json
import sys

import anyio
from mcp import Client, StdioServerParameters


def server():
    if sys.argv[1] in ("--http", "--http-plan", "--flow"):
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


async def cancelled(c, step):
    """A long call the client abandons once its first progress notification arrived."""
    first = anyio.Event()
    seen = {"progressBeforeAbort": 0}

    async def on_progress(p, total, message):
        seen["progressBeforeAbort"] += 1
        first.set()

    async def call():
        r = await c.call_tool(step["tool"], step["arguments"], progress_callback=on_progress)
        seen["answered"] = text_of(r)

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        # A guard, not a measure: without any progress the script fails instead of hanging.
        with anyio.fail_after(120):
            await first.wait()
        tg.cancel_scope.cancel()
    seen.setdefault("error", "cancelled by the client")
    return seen


def text_of(result):
    return "\n".join(b.text for b in result.content if getattr(b, "type", None) == "text")


async def run_plan():
    params, mode = server()
    with open(sys.argv[5]) as f:
        plan = json.load(f)
    out = {"sdk": "python", "mode": mode, "servers": {}}
    async with Client(params, mode=mode) as c:
        out["protocol_version"] = str(c.protocol_version)
        tools = await c.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        for step in plan["servers"]:
            seen = {}
            progress = []

            async def on_progress(p, total, message):
                progress.append([p, total, message])

            call = step["progress"]
            r = await c.call_tool(call["tool"], call["arguments"], progress_callback=on_progress)
            seen["progress"] = progress
            seen["progress_text"] = text_of(r)
            seen["cancel"] = await cancelled(c, step["cancel"])
            large = await c.call_tool(step["large"]["tool"], step["large"]["arguments"])
            seen["envelope"] = large.structured_content
            ref = (large.structured_content or {}).get("ref")
            if ref:
                q = await c.call_tool("loom_query", {"sql": step["sql"].replace("{ref}", ref)})
                seen["query"] = q.structured_content or {"text": text_of(q), "isError": q.is_error}
            else:
                seen["large_text"] = text_of(large)[:500]
            out["servers"][step["name"]] = seen
    print(json.dumps(out))


async def find_and_call():
    mode = sys.argv[2]
    if sys.argv[3] == "--http":
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {sys.argv[5]}"}, timeout=60)
        params = streamable_http_client(sys.argv[4], http_client=http)
    else:
        params = StdioServerParameters(command=sys.argv[4], args=sys.argv[5:])
    out = {}
    async with Client(params, mode=mode) as c:
        out["protocol_version"] = str(c.protocol_version)
        out["before"] = sorted(t.name for t in (await c.list_tools()).tools)
        r = await c.call_tool("loom_find_tools", {"query": "what is the weather like in a city right now"})
        out["found"] = [t["name"] for t in r.structured_content["tools"]]
        r = await c.call_tool("loom_call", {"tool": "sample_get_weather", "arguments": {"city": "Lima"}})
        out["via_loom_call"] = r.content[0].text
        r = await c.call_tool("loom_call", {"tool": "sample_get_weathr", "arguments": {"town": "Lima"}})
        out["near_miss"] = [r.is_error, r.content[0].text]
        r = await c.call_tool("loom_call", {"tool": "sample_get_weather", "arguments": {"town": "Lima"}})
        out["bad_arguments"] = [r.is_error, r.content[0].text]
        out["after"] = sorted(t.name for t in (await c.list_tools()).tools)
        r = await c.call_tool("sample_list_customers", {"limit": 2})
        out["hidden_by_name"] = json.loads(r.content[0].text)["total"]
        r = await c.call_tool("loom_context", {"query": "weather"})
        out["context"] = r.structured_content
    print(json.dumps(out))


async def flow():
    """A bound loom_call and a loom_call_each batch, as a model makes them."""
    params, mode = server()
    progress = []
    out = {}

    async def on_progress(p, total, message):
        progress.append([p, total])

    async with Client(params, mode=mode) as c:
        r = await c.call_tool("sample_list_orders", {"limit": 1000})
        orders = r.structured_content["ref"]
        r = await c.call_tool("sample_tail_logs", {"lines": 3000})
        blob = r.structured_content["blob_key"]
        r = await c.call_tool("loom_call", {
            "tool": "sample_write_note",
            "arguments": {"title": "errors"},
            "bind": {"/body": {"blob": blob, "pattern": "ERROR"}},
        })
        out["receipt"] = text_of(r)
        sql = f"SELECT order_id FROM {orders} WHERE status = 'pending' ORDER BY order_id LIMIT 12"
        r = await c.call_tool("loom_call_each", {
            "tool": "sample_get_order_details", "sql": sql, "concurrency": 3,
        }, progress_callback=on_progress)
        out["batch"] = r.structured_content
        out["progress"] = progress
        ref = r.structured_content["ref"]
        r = await c.call_tool("loom_query", {"sql": f"SELECT count(DISTINCT order_id) AS ids, any_value(typeof(order_id)) AS t FROM {ref}"})
        out["query"] = r.structured_content["rows"]
    print(json.dumps(out))


if sys.argv[1] == "--find":
    asyncio.run(find_and_call())
elif sys.argv[1] == "--flow":
    asyncio.run(flow())
else:
    asyncio.run(run_plan() if sys.argv[1] == "--http-plan" else main())
