"""Extra: BM25 + w*(minmax cos_minilm + minmax cos_mpnet)/2, w picked on even tasks."""
import numpy as np
from common import *
tools, tasks, gold = load(); N = len(tasks)
EVEN = list(range(0, N, 2)); ODD = list(range(1, N, 2))
bm = BM25([t[2] for t in tools]); B = np.array([bm.scores(t["task"]) for t in tasks])
Cs = []
for n in ("minilm-l6", "mpnet-base"):
    z = np.load(f"{WORK}/emb/{n}.npz"); Cs.append(minmax(z["Q"] @ z["T"].T))
C = (Cs[0] + Cs[1]) / 2
w = pick(lambda w: fuse(B, C, w), WS, gold, EVEN)
f = lambda m: "%.3f / %.3f / %.3f" % m
print(f"| minilm+mpnet mean cos (no BM25) | {f(metrics(C, gold))} | {f(metrics(C, gold, ODD))} | {f(metrics(C, gold, EVEN))} | 16+79 |")
F = fuse(B, C, w)
print(f"| BM25+w·(minilm+mpnet)/2 (w={w}) | {f(metrics(F, gold))} | {f(metrics(F, gold, ODD))} | {f(metrics(F, gold, EVEN))} | 16+79 |")
