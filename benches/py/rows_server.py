"""An MCP server (the Python SDK's) whose tools return large results of the shapes loom
intercepts, for benches/py/intercept_added.py. Each text is made once per size and kept, so a
call costs the server the same every time and the difference between a direct call and one
through loom is what loom adds.

Tools:
- `wrapped(n)`: `{"data": [n order rows of 10 columns], "total": n}` as one text block;
- `listing(n)`: `ps aux` output of n rows (the rows of tests/fixtures/shapes/ps_aux.txt over
  and over, so the columns stay aligned as ps aligns them).
"""
import json
import pathlib

from mcp.server.mcpserver import MCPServer

server = MCPServer("rows")
made = {}
FIXTURE = pathlib.Path(__file__).resolve().parents[2] / "tests/fixtures/shapes/ps_aux.txt"


def orders(n):
    statuses = ["pending", "paid", "shipped", "delivered", "refunded"]
    countries = ["PT", "DE", "FR", "JP"]
    rows = [
        {
            "order_id": 7_300_000_000_000_000_000 + i * 7919,
            "customer_id": 1 + (i * 37) % 5000,
            "status": statuses[i % 5],
            "amount": (500 + (i * 7717) % 250_000) / 100,
            "currency": ["EUR", "USD", "JPY"][i % 3],
            "items": 1 + i % 9,
            "created_at": f"2025-{1 + i % 12:02}-{1 + i % 28:02}T{i % 24:02}:{i % 60:02}:00Z",
            "country": countries[i % 4],
            "express": i % 7 == 0,
            "note": f"order number {i}",
        }
        for i in range(n)
    ]
    return json.dumps({"data": rows, "total": n})


def ps(n):
    header, *rows = FIXTURE.read_text().rstrip("\n").split("\n")
    return "\n".join([header] + [rows[i % len(rows)] for i in range(n)]) + "\n"


@server.tool(structured_output=False)
def wrapped(n: int) -> str:
    """Order rows wrapped in an object, as one JSON text."""
    key = ("wrapped", n)
    if key not in made:
        made[key] = orders(n)
    return made[key]


@server.tool(structured_output=False)
def listing(n: int) -> str:
    """`ps aux` output of n rows."""
    key = ("listing", n)
    if key not in made:
        made[key] = ps(n)
    return made[key]


if __name__ == "__main__":
    server.run()
