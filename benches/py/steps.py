"""Where a small call's work goes inside `loom serve`, counted in instructions (callgrind), which
unlike wall time does not depend on how busy the machine is: N sequential `sample_get_weather`
calls from the Python MCP SDK to `loom serve` running under `valgrind --tool=callgrind`, then
the inclusive instruction count of each step of the call's path, per call.

Usage: steps.py LOOM_BINARY CONFIG [N]   (run with the test peers' venv python; valgrind on PATH)

The counts include the start and the warm-up, so the per-call figures are taken as the
difference of two runs (N and 2N calls) divided by N.
"""
import asyncio
import os
import re
import subprocess
import sys
import tempfile

from mcp import Client, StdioServerParameters

# A step of the path and the functions whose inclusive count stands for it (the first found).
STEPS = [
    ("whole process (per call)", ["TOTAL"]),
    ("client pipe: read and split a message", ["loom::frontend::pipe::"]),
    ("client message: parse the envelope", ["loom::jsonrpc::"]),
    ("call: begin (redact, log, bus)", ["loom::upstream::calls::begin_call"]),
    ("call: end (log, bus, archive)", ["loom::upstream::calls::end_call"]),
    ("redaction", ["loom::intercept::redact::redact_str", "loom::intercept::redact::redact"]),
    ("call log: started", ["loom::session::calls::CallLog::started"]),
    ("call log: finished", ["loom::session::calls::CallLog::finished"]),
    ("event bus: publish", ["loom::session::Bus::publish", "Bus::publish"]),
    ("approvals: decide", ["loom::session::approvals::"]),
    ("listing placement", ["loom::upstream::listing::decide"]),
    ("archive: queue", ["loom::history::archive::Archive::send"]),
    ("server pipe: write and read", ["loom::downstream::stdio::", "loom::downstream::connection::"]),
    ("interception: is it large?", ["loom::intercept::"]),
    ("malloc and free", ["malloc", "free"]),
    ("kernel calls: read, write, epoll", ["read", "write", "epoll_wait"]),
]


async def drive(loom, config, n, out):
    params = StdioServerParameters(
        command="valgrind",
        args=["--tool=callgrind", f"--callgrind-out-file={out}", "--trace-children=no",
              loom, "serve", "-c", config],
    )
    async with Client(params, mode="legacy") as c:
        for _ in range(n):
            await c.call_tool("sample_get_weather", {"city": "Lima"})


def inclusive(out):
    text = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
        capture_output=True, text=True, check=True,
    ).stdout
    total = 0
    costs = []
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)", line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        name = m.group(2)
        if "PROGRAM TOTALS" in name:
            total = ir
        else:
            costs.append((name, ir))
    return total, costs


def step_cost(total, costs, keys):
    for key in keys:
        if key == "TOTAL":
            return total
        # The function's own line: `file:function [object]`; the first match is the most
        # inclusive (callgrind_annotate sorts by count).
        for name, ir in costs:
            fn = name.split(":", 1)[-1] if ":" in name and not name.startswith("loom::") else name
            if key in ("malloc", "free", "read", "write", "epoll_wait"):
                if re.search(rf"(^|[^\w:]){key}\b(?!_)", fn.split(" ")[0].split(":")[-1]) and len(
                    fn.split(" ")[0].split(":")[-1]) == len(key):
                    return ir
            elif key in fn:
                return ir
    return None


async def main():
    loom, config = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    with tempfile.TemporaryDirectory() as d:
        runs = []
        for calls in (n, 2 * n):
            out = os.path.join(d, f"cg.{calls}")
            await drive(loom, config, calls, out)
            runs.append(inclusive(out))
    (t1, c1), (t2, c2) = runs
    print(f"{'step':45} {'instructions per call':>22}")
    for label, keys in STEPS:
        a, b = step_cost(t1, c1, keys), step_cost(t2, c2, keys)
        per = "—" if a is None or b is None else f"{(b - a) / n:,.0f}"
        print(f"{label:45} {per:>22}")


asyncio.run(main())
