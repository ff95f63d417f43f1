"""evaluate.py [models...] -> prints a markdown table and writes results.json.
(a) cosine alone; (b) BM25 + w*minmax(cos), w picked on even tasks; (c) + v*server prior (two variants)."""
import sys, json
import numpy as np
from common import load, BM25, metrics, fuse, minmax, pick, WS, VS, WORK

tools, tasks, gold = load()
N = len(tasks)
EVEN = [i for i in range(N) if i % 2 == 0]
ODD = [i for i in range(N) if i % 2 == 1]
bm = BM25([t[2] for t in tools])
B = np.array([bm.scores(t["task"]) for t in tasks])
tool_server = [t[0] for t in tools]


def fmt(m):
    return "%.3f / %.3f / %.3f" % m


def row(label, S):
    return {"label": label, "all": metrics(S, gold), "odd": metrics(S, gold, ODD), "even": metrics(S, gold, EVEN)}


results = []
results.append(row("BM25 alone", B))
models = sys.argv[1:] or ["minilm-l6", "mpnet-base", "e5-small-q4", "e5-small-enpt-q4"]
for name in models:
    z = np.load(f"{WORK}/emb/{name}.npz")
    T, Q, ms = z["T"], z["Q"], float(z["ms"])
    C = Q @ T.T
    r = row(f"{name} cosine", C); r["ms"] = ms; results.append(r)
    w = pick(lambda w: fuse(B, C, w), WS, gold, EVEN)
    F = fuse(B, C, w)
    r = row(f"{name} BM25+w·cos (w={w})", F); r["ms"] = ms; results.append(r)
    # server priors
    servers = list(z["servers"])
    sidx = np.array([servers.index(s) for s in tool_server])
    Stext = z["S"]  # embedded concatenation per server
    Smean = np.stack([T[sidx == k].mean(0) for k in range(len(servers))])
    Smean /= np.linalg.norm(Smean, axis=1, keepdims=True)
    for pname, SV in (("concat", Stext), ("mean", Smean)):
        P = minmax(Q @ SV.T)[:, sidx]  # (nq, ntools) server cosine normalised 0-1 per query
        # jointly pick w and v on even tasks
        best = None
        for ww in WS:
            for v in VS:
                m = metrics(fuse(B, C, ww) + v * P, gold, EVEN)
                if best is None or (m[2], m[0]) > best[0]:
                    best = ((m[2], m[0]), ww, v)
        _, ww, v = best
        r = row(f"{name} BM25+w·cos+v·server[{pname}] (w={ww}, v={v})", fuse(B, C, ww) + v * P)
        r["ms"] = ms; results.append(r)
        # prior on cosine alone (no BM25)
        v2 = pick(lambda v: minmax(C) + v * P, VS, gold, EVEN)
        r = row(f"{name} cos+v·server[{pname}] (v={v2})", minmax(C) + v2 * P); r["ms"] = ms; results.append(r)

# oracle: candidates restricted to the gold server (upper bound for any server prior)
gold_server = [tasks[i]["server"] for i in range(N)]
ORACLE = np.array([[1.0 if tool_server[j] == gold_server[i] else 0.0 for j in range(len(tools))] for i in range(N)])
for name in models:
    z = np.load(f"{WORK}/emb/{name}.npz")
    C = z["Q"] @ z["T"].T
    w = pick(lambda w: fuse(B, C, w), WS, gold, EVEN)
    r = row(f"{name} BM25+w·cos (w={w}) within ORACLE gold server (upper bound)", fuse(B, C, w) + 100 * ORACLE)
    r["ms"] = float(z["ms"]); results.append(r)
    servers = list(z["servers"])
    for pname, SV in (("concat", z["S"]), ("mean", None)):
        if SV is None:
            T = z["T"]; sidx = np.array([servers.index(s) for s in tool_server])
            SV = np.stack([T[sidx == k].mean(0) for k in range(len(servers))])
        top = np.argmax(z["Q"] @ SV.T, axis=1)
        acc = np.mean([servers[top[i]] == gold_server[i] for i in range(N)])
        print(f"{name}: server-prior[{pname}] top-1 server accuracy = {acc:.3f}", file=sys.stderr)
    # server accuracy of the fused tool ranking itself
    F = fuse(B, C, w)
    acc = np.mean([tool_server[int(np.argmax(F[i]))] == gold_server[i] for i in range(N)])
    print(f"{name}: fused ranking top-1 tool's server accuracy = {acc:.3f}", file=sys.stderr)

print("| method | all: R@1 / R@5 / MRR | odd: R@1 / R@5 / MRR | even (tuning): R@1 / R@5 / MRR | 1-query ms (1 thread) |")
print("|---|---|---|---|---|")
for r in results:
    print(f"| {r['label']} | {fmt(r['all'])} | {fmt(r['odd'])} | {fmt(r['even'])} | {r.get('ms', 0):.1f} |")
json.dump(results, open(f"{WORK}/results.json", "w"), indent=1)
