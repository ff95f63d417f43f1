"""Added latency of a small call as the Python MCP SDK measures it: N sequential
`sample_get_weather` calls straight to `loom sample-server`, then through `loom serve` in front of
the same server, after warm-up calls; prints each side's median and p99 and the difference.

Usage: latency.py LOOM_BINARY CONFIG [N]   (run with the test peers' venv python)
"""
import asyncio
import json
import statistics
import sys
import time

from mcp import Client, StdioServerParameters


async def measure(params, tool, n):
    async with Client(params, mode="legacy") as c:
        for _ in range(20):
            await c.call_tool(tool, {"city": "Lima"})
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            await c.call_tool(tool, {"city": "Lima"})
            times.append(time.perf_counter() - t0)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


async def main():
    loom, config = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    direct = await measure(StdioServerParameters(command=loom, args=["sample-server"]), "get_weather", n)
    through = await measure(
        StdioServerParameters(command=loom, args=["serve", "-c", config]), "sample_get_weather", n
    )
    ms = lambda s: round(s * 1000, 3)
    print(json.dumps({
        "calls": n,
        "direct_p50_ms": ms(direct[0]), "direct_p99_ms": ms(direct[1]),
        "loom_p50_ms": ms(through[0]), "loom_p99_ms": ms(through[1]),
        "added_p50_ms": ms(through[0] - direct[0]), "added_p99_ms": ms(through[1] - direct[1]),
    }))


asyncio.run(main())
