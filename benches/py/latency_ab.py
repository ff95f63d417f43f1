"""Added latency of a small call for several loom builds at once, as the Python MCP SDK measures
it. Every client is opened together (straight to `loom sample-server`, and through each
`loom serve -c CONFIG`), then the calls take turns, one per client per round in a rotating
order, so that a noisy neighbour or a slow minute weighs on every side alike. Prints each
side's median and p99 and, for each loom, its median less the direct median.

Usage: latency_ab.py SAMPLE_BINARY N LABEL=LOOM_BINARY:CONFIG [LABEL=...]
       (run with the test peers' venv python; each CONFIG names the sample server)
"""
import asyncio
import contextlib
import json
import statistics
import sys
import time

from mcp import Client, StdioServerParameters


def summary(times):
    times = sorted(times)
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


async def main():
    sample, n = sys.argv[1], int(sys.argv[2])
    sides = [("direct", StdioServerParameters(command=sample, args=["sample-server"]), "get_weather")]
    for spec in sys.argv[3:]:
        label, rest = spec.split("=", 1)
        binary, config = rest.split(":", 1)
        sides.append(
            (label, StdioServerParameters(command=binary, args=["serve", "-c", config]), "sample_get_weather")
        )
    async with contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(Client(p, mode="legacy")) for _, p, _ in sides]
        for c, (_, _, tool) in zip(clients, sides):
            for _ in range(20):
                await c.call_tool(tool, {"city": "Lima"})
        times = [[] for _ in sides]
        for i in range(n):
            for j in range(len(sides)):
                k = (i + j) % len(sides)
                t0 = time.perf_counter()
                await clients[k].call_tool(sides[k][2], {"city": "Lima"})
                times[k].append(time.perf_counter() - t0)
    ms = lambda s: round(s * 1000, 3)
    direct = summary(times[0])
    out = {"calls": n, "direct_p50_ms": ms(direct[0]), "direct_p99_ms": ms(direct[1])}
    for (label, _, _), t in zip(sides[1:], times[1:]):
        p50, p99 = summary(t)
        out[label] = {"p50_ms": ms(p50), "p99_ms": ms(p99), "added_p50_ms": ms(p50 - direct[0])}
    print(json.dumps(out))


asyncio.run(main())
