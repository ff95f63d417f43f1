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

# A step of the path and a pattern of the function whose inclusive count stands for it
# (callgrind_annotate's line: `file:function [object]`; the most inclusive match is taken).
STEPS = [
    ("whole process", r"PROGRAM TOTALS"),
    ("a client line, all of loom's work for it", r"ClientSession>::dispatch::\{\{closure\}\} "),
    ("  parse the client's message", r":loom::jsonrpc::RawMessage::parse "),
    ("  start timing the call", r"ClientSession>::track_call "),
    ("  log the call's start (redact, log, bus; after the request left)", r":loom::upstream::calls::announce "),
    ("    redact the params once", r":loom::intercept::redact::Redacted::object_and_value "),
    ("    call log: started", r":loom::session::calls::CallLog::started "),
    ("  approvals (none configured)", r"ClientSession>::policy "),
    ("  forward to the server and wait", r":loom::upstream::forward::<impl loom::upstream::ClientSession>::forward::\{\{closure\}\} "),
    ("    send the request to the server", r":loom::downstream::connection::Connection::send_request_kept "),
    ("    shape the reply for a legacy client", r":loom::protocol::legacy_result::for_legacy_client "),
    ("    input-required bridge check", r":loom::upstream::bridge::input_required "),
    ("  end the call (log, bus, archive queue)", r"ClientSession>::end_call "),
    ("    token estimate of the result", r":loom::intercept::tokens::estimate_all "),
    ("event bus: publish (all events)", r":loom::session::EventBus::publish "),
    ("server's pipe: read its lines", r":loom::downstream::stdio::spawn::\{\{closure\}\} "),
    ("server's messages: handle a reply", r":loom::downstream::connection::Connection::handle_incoming "),
    ("client's pipe: read and write", r":loom::frontend::stdio::serve::\{\{closure\}\} "),
    ("history: the archive's worker", r":loom::history::archive::Worker::run "),
    ("malloc (all callers)", r":malloc \[.*libc"),
    ("free (all callers)", r":free \[.*libc"),
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
    """Every line of callgrind_annotate's inclusive view: (count, text)."""
    text = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
        capture_output=True, text=True, check=True,
    ).stdout
    lines = []
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)", line)
        if m:
            lines.append((int(m.group(1).replace(",", "")), m.group(2)))
    return lines


def step_cost(lines, pattern):
    for ir, name in lines:
        if re.search(pattern, name + " "):
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
    first, second = runs
    print(f"{'step':48} {'instructions per call':>22}")
    for label, pattern in STEPS:
        a, b = step_cost(first, pattern), step_cost(second, pattern)
        per = "—" if a is None or b is None else f"{(b - a) / n:,.0f}"
        print(f"{label:48} {per:>22}")


asyncio.run(main())
