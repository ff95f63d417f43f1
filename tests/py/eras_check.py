"""Drives loom over stdio with the Python MCP SDK as a client of either era, answering the
servers' questions (sampling, elicitation, roots), and prints what it saw as one JSON object.

Usage: eras_check.py MODE PLAN -- COMMAND ARGS...
  MODE: legacy | 2026-07-28
  PLAN: a JSON file: {"calls": [{"name": TOOL, "arguments": {...}, "key": KEY}, ...],
        "pause_after": KEY or null, "paused": FILE, "go_on": FILE,
        "list_triggers": [TOOL, ...], "prompts": [{"name": PROMPT, "key": KEY}, ...]}
        Each call's result text (all text content joined) is reported under its key, or
        "error: ..." when the call raised. After the call named by pause_after, the script
        creates the file `paused` and waits (at most 60 s) for the file `go_on` before going
        on: the test restarts a server in between. Then each list trigger (a tool that
        changes its server's tool list) is called, and the script reports whether the client
        heard of the change: on a `subscriptions/listen` stream (2026-07-28) or as a
        `notifications/tools/list_changed` (legacy), and the tools listed afterwards.
The client answers sampling with the text "sampled-by-client", elicitation by accepting
{"name": "Ada", "email": "ada@example.com", "age": 36, "confirmed": true, ...}, and roots
with file:///tmp/loom-eras-root.
"""
import json
import os
import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp_types import (
    CreateMessageResult,
    ElicitResult,
    ListRootsResult,
    Root,
    TextContent,
)

asked = {"sampling": 0, "elicitation": 0, "roots": 0}
list_changed = []


async def on_message(message):
    root = getattr(message, "root", message)
    if getattr(root, "method", None) == "notifications/tools/list_changed":
        list_changed.append(root.method)


async def on_sampling(context, params):
    asked["sampling"] += 1
    return CreateMessageResult(
        role="assistant",
        content=TextContent(type="text", text="sampled-by-client"),
        model="loom-test-model",
        stop_reason="endTurn",
    )


async def on_elicitation(context, params):
    asked["elicitation"] += 1
    schema = getattr(params, "requested_schema", None) or {}
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    content = {}
    for name, p in props.items():
        kind = p.get("type")
        if "enum" in p:
            content[name] = p["enum"][0]
        elif kind == "boolean":
            content[name] = True
        elif kind in ("integer", "number"):
            content[name] = 36
        elif p.get("format") == "email" or "email" in name:
            content[name] = "ada@example.com"
        else:
            content[name] = "Ada"
    return ElicitResult(action="accept", content=content)


async def on_roots(context):
    asked["roots"] += 1
    return ListRootsResult(roots=[Root(uri="file:///tmp/loom-eras-root", name="eras-root")])


def text_of(result):
    parts = []
    for c in result.content:
        t = getattr(c, "text", None)
        if t is not None:
            parts.append(t)
    return "\n".join(parts)


async def main():
    mode, plan_file = sys.argv[1], sys.argv[2]
    sep = sys.argv.index("--")
    command, args = sys.argv[sep + 1], sys.argv[sep + 2 :]
    plan = json.load(open(plan_file))
    params = StdioServerParameters(command=command, args=args)
    out = {"results": {}}
    async with Client(
        params,
        mode=mode,
        sampling_callback=on_sampling,
        elicitation_callback=on_elicitation,
        list_roots_callback=on_roots,
        message_handler=on_message,
    ) as c:
        out["protocol_version"] = str(c.protocol_version)
        tools = await c.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        for call in plan["calls"]:
            try:
                with anyio.fail_after(60):
                    r = await c.call_tool(call["name"], call.get("arguments", {}))
                out["results"][call["key"]] = text_of(r)
            except Exception as e:  # reported, never hidden
                out["results"][call["key"]] = f"error: {type(e).__name__}: {e}"
            if plan.get("pause_after") == call["key"]:
                open(plan["paused"], "w").close()
                with anyio.fail_after(60):
                    while not os.path.exists(plan["go_on"]):
                        await anyio.sleep(0.05)
        for prompt in plan.get("prompts", []):
            try:
                with anyio.fail_after(60):
                    r = await c.get_prompt(prompt["name"], prompt.get("arguments"))
                out["results"][prompt["key"]] = r.messages[0].content.text
            except Exception as e:  # reported, never hidden
                out["results"][prompt["key"]] = f"error: {type(e).__name__}: {e}"
        out["list_changes"] = {}
        for trigger in plan.get("list_triggers", []):
            heard = False
            if mode == "legacy":
                before = len(list_changed)
                await c.call_tool(trigger, {})
                with anyio.move_on_after(10):
                    while len(list_changed) == before:
                        await anyio.sleep(0.05)
                heard = len(list_changed) > before
            else:
                async with c.listen(tools_list_changed=True) as sub:
                    await c.call_tool(trigger, {})
                    with anyio.move_on_after(10):
                        async for event in sub:
                            heard = True
                            break
            tools = await c.list_tools()
            out["list_changes"][trigger] = {"heard": heard, "tools": sorted(t.name for t in tools.tools)}
    out["asked"] = asked
    print(json.dumps(out))


anyio.run(main)
