"""CPU time and thread switches loom spends per small tools/call (load-independent)."""
import json, os, subprocess, sys, time, tempfile
loom = sys.argv[1]; n = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
d = tempfile.mkdtemp()
cfg = os.path.join(d, "loom.toml")
open(cfg, "w").write(f'[[servers]]\nname = "sample"\ncommand = "{loom}"\nargs = ["sample-server"]\n')
p = subprocess.Popen([loom, "serve", "-c", cfg], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
nid = 0
def req(method, params):
    global nid
    nid += 1
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": nid, "method": method, "params": params}) + "\n").encode()); p.stdin.flush()
    while True:
        line = p.stdout.readline()
        if not line: raise SystemExit("loom closed")
        m = json.loads(line)
        if m.get("id") == nid and "method" not in m: return m
req("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}})
p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'); p.stdin.flush()
req("tools/list", {})
for _ in range(300): req("tools/call", {"name": "sample_get_weather", "arguments": {"city": "Lisbon"}})
def stat():
    tick = os.sysconf("SC_CLK_TCK"); cpu = 0; sw = 0
    for t in os.listdir(f"/proc/{p.pid}/task"):
        try:
            f = open(f"/proc/{p.pid}/task/{t}/stat").read().rsplit(")", 1)[1].split()
            cpu += int(f[11]) + int(f[12])
            for l in open(f"/proc/{p.pid}/task/{t}/status"):
                if "ctxt_switches" in l: sw += int(l.split()[1])
        except FileNotFoundError: pass
    return cpu / tick, sw
c0, s0 = stat(); t0 = time.perf_counter()
for _ in range(n): req("tools/call", {"name": "sample_get_weather", "arguments": {"city": "Lisbon"}})
t1 = time.perf_counter(); c1, s1 = stat()
print(json.dumps({"calls": n, "loom_cpu_us_per_call": round((c1 - c0) / n * 1e6, 1), "loom_switches_per_call": round((s1 - s0) / n, 2), "wall_us_per_call": round((t1 - t0) / n * 1e6, 1)}))
p.stdin.close(); p.wait(timeout=10)
