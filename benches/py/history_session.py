"""Builds a past session of D datasets and C small calls with loom's own archive writer, then
times opening it: `loom query --session S "SELECT count(*) FROM loom_calls"` (wall time) and
`loom tui --open S` until `tmux capture-pane -p` shows the Traffic pane.

`loom serve` runs with a config whose `history_dir` is a temporary folder (`history = "all"`),
in front of `loom sample-server`. A raw JSON-RPC line client over its stdio makes D
`sample_list_orders` calls (limit 1000 + i, each intercepted into a dataset), one at a time,
then C `sample_get_weather` calls, pipelined W at a time; then it closes loom's stdin so the
session ends cleanly (the archive is compacted at exit).

Usage: history_session.py LOOM_BINARY [DATASETS] [CALLS] [RUNS]   (python3; tmux on PATH)
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

WINDOW = 64


def build(loom, work, datasets, calls):
    cfg = os.path.join(work, "loom.toml")
    with open(cfg, "w") as f:
        f.write(
            'history = "all"\nhistory_dir = "hist"\n'
            '[[servers]]\nname = "sample"\ncommand = "loom"\nargs = ["sample-server"]\n'
        )
    p = subprocess.Popen(
        [loom, "serve", "-c", cfg],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=work,
        bufsize=1 << 20,
    )
    next_id = [0]

    def send(method, params):
        next_id[0] += 1
        p.stdin.write(
            (json.dumps({"jsonrpc": "2.0", "id": next_id[0], "method": method, "params": params}) + "\n").encode()
        )
        return next_id[0]

    def wait_responses(k):
        got = 0
        while got < k:
            line = p.stdout.readline()
            if not line:
                raise SystemExit("loom closed its stdout")
            if b'"method"' in line[:200] and b'"result"' not in line[:200]:
                continue  # a notification or a request from loom
            got += 1

    t0 = time.perf_counter()
    send("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
    p.stdin.flush()
    wait_responses(1)
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    send("tools/list", {})
    p.stdin.flush()
    wait_responses(1)
    for i in range(datasets):
        send("tools/call", {"name": "sample_list_orders", "arguments": {"limit": 1000 + i}})
        p.stdin.flush()
        wait_responses(1)
    t_data = time.perf_counter() - t0
    done = 0
    while done < calls:
        k = min(WINDOW, calls - done)
        for _ in range(k):
            send("tools/call", {"name": "sample_get_weather", "arguments": {"city": "Lima"}})
        p.stdin.flush()
        wait_responses(k)
        done += k
    t_calls = time.perf_counter() - t0 - t_data
    p.stdin.close()
    p.wait(timeout=600)
    return cfg, t_data, t_calls


def session_id(loom, cfg):
    out = subprocess.run([loom, "history", "-c", cfg, "--format", "json"], capture_output=True, check=True)
    sessions = json.loads(out.stdout)
    return sessions[0]


def time_query(loom, cfg, sid):
    t = time.perf_counter()
    out = subprocess.run(
        [loom, "query", "--session", sid, "-c", cfg, "--format", "json", "SELECT count(*) AS n FROM loom_calls"],
        capture_output=True,
    )
    dt = time.perf_counter() - t
    return dt, out.stdout.decode().strip() or out.stderr.decode().strip()


def time_tui(loom, cfg, sid, work):
    name = f"loombench{os.getpid()}"
    subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
    t = time.perf_counter()
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", "160", "-y", "48", "-c", work,
         f"{loom} tui -c {cfg} --open {sid}"],
        check=True,
    )
    shown = None
    while time.perf_counter() - t < 30:
        screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True).stdout.decode()
        if "Traffic" in screen:
            shown = time.perf_counter() - t
            break
        time.sleep(0.005)
    subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
    return shown, screen


def main():
    loom = os.path.abspath(sys.argv[1])
    datasets = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    work = tempfile.mkdtemp(prefix="loom-hist-bench-")
    try:
        cfg, t_data, t_calls = build(loom, work, datasets, calls)
        s = session_id(loom, cfg)
        sid = s["id"]
        hist = os.path.join(work, "hist")
        size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(hist) for f in fs)
        print(json.dumps({"built": {"datasets_s": round(t_data, 2), "calls_s": round(t_calls, 2),
                                    "archive_mib": round(size / 1048576, 1), "session": s}}))
        q, t = [], []
        for _ in range(runs):
            dt, out = time_query(loom, cfg, sid)
            q.append(dt)
            shown, screen = time_tui(loom, cfg, sid, work)
            if shown is None:
                print("tui: no Traffic pane after 30 s; last screen:\n" + screen)
            else:
                t.append(shown)
        print("query output:", out)
        print(json.dumps({
            "query_s": [round(x, 3) for x in q], "query_median_s": round(statistics.median(q), 3),
            "tui_first_frame_s": [round(x, 3) for x in t],
            "tui_median_s": round(statistics.median(t), 3) if t else None,
        }))
    finally:
        if os.environ.get("KEEP") is None:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("kept", work)


main()
