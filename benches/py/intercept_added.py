"""What loom adds to a large result, as the Python MCP SDK measures it: the same tool of
benches/py/rows_server.py called straight and through `loom serve`, the two clients taking
turns call by call, so that a busy minute weighs on both alike. Prints, per shape and size,
each side's median and loom's added median (loom's time less the direct time), and loom's
idle RSS (after initialize and the tool list, before any call) and RSS after the calls.

Usage: intercept_added.py LOOM_BINARY [SHAPE:ROWS:CALLS ...]
       (default wrapped:20000:15 listing:94:30 wrapped:1000000:3; run with the test peers'
       venv python)
"""
import asyncio
import contextlib
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

from mcp import Client, StdioServerParameters

HERE = pathlib.Path(__file__).resolve().parent


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return None


def loom_pid(parent):
    """The `loom serve` process: the child of this process whose command line is loom's."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open(f"/proc/{entry}/stat").read()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            cmd = open(f"/proc/{entry}/cmdline").read().split("\0")
        except OSError:
            continue
        if ppid == parent and "serve" in cmd:
            return int(entry)
    return None


async def main():
    loom = sys.argv[1]
    specs = sys.argv[2:] or ["wrapped:20000:15", "listing:94:30", "wrapped:1000000:3"]
    server = [sys.executable, str(HERE / "rows_server.py")]
    work = tempfile.mkdtemp(prefix="loom-intercept-bench-")
    config = pathlib.Path(work) / "loom.toml"
    config.write_text(
        "history = \"off\"\n"
        f"max_downstream_message_bytes = {1 << 30}\n"
        "memory_budget = \"4GiB\"\n"
        "memory_limit = \"8GB\"\n"
        f"export_dir = {json.dumps(work)}\n"
        "[[servers]]\n"
        "name = \"rows\"\n"
        f"command = {json.dumps(server[0])}\n"
        f"args = [{json.dumps(server[1])}]\n"
    )
    direct = StdioServerParameters(command=server[0], args=server[1:])
    through = StdioServerParameters(command=loom, args=["serve", "-c", str(config)])
    out = {}
    async with contextlib.AsyncExitStack() as stack:
        a = await stack.enter_async_context(Client(direct, mode="legacy"))
        b = await stack.enter_async_context(Client(through, mode="legacy"))
        await a.list_tools()
        await b.list_tools()
        await asyncio.sleep(1.0)
        pid = loom_pid(os.getpid())
        out["loom_rss_idle_mib"] = rss_mib(pid) if pid else None
        for spec in specs:
            shape, rows, calls = spec.split(":")
            rows, calls = int(rows), int(calls)
            args = {"n": rows}
            # The server makes and keeps the text on its first call; one warm call each.
            await a.call_tool(shape, args)
            r = await b.call_tool(f"rows_{shape}", args)
            text = r.content[0].text if r.content else ""
            envelope = text[:80].replace("\n", " ")
            times = ([], [])
            for i in range(calls):
                for k in ((0, 1) if i % 2 == 0 else (1, 0)):
                    client, tool = (a, shape) if k == 0 else (b, f"rows_{shape}")
                    t0 = time.perf_counter()
                    await client.call_tool(tool, args)
                    times[k].append(time.perf_counter() - t0)
            d, l = statistics.median(times[0]), statistics.median(times[1])
            out[spec] = {
                "direct_p50_s": round(d, 4),
                "loom_p50_s": round(l, 4),
                "added_p50_s": round(l - d, 4),
                "loom_answer": envelope,
            }
        out["loom_rss_after_mib"] = rss_mib(pid) if pid else None
    print(json.dumps(out, indent=1))


asyncio.run(main())
