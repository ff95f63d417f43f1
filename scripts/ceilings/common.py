"""Shared corpus loading, BM25, metrics, fusion for the tool-retrieval ceiling study."""
import json, glob, os, re, math
import numpy as np

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/fixtures/tool_corpus")
WORK = os.environ.get("CEIL_DIR", "/tmp/ceil")


def load():
    tools = []  # (server, name, text)
    for f in sorted(glob.glob(os.path.join(CORPUS, "*.json"))):
        d = json.load(open(f))
        s = d["server"]
        for t in d["tools"]:
            parts = [s, t["name"]]
            if t.get("title"):
                parts.append(t["title"])
            if t.get("description"):
                parts.append(t["description"])
            props = (t.get("inputSchema") or {}).get("properties") or {}
            for p, spec in props.items():
                parts.append(p)
                if isinstance(spec, dict) and spec.get("description"):
                    parts.append(spec["description"])
            text = " ".join(x.strip() for x in parts if x and x.strip())
            tools.append((s, t["name"], text))
    tasks = [json.loads(l) for l in open(os.path.join(CORPUS, "tasks.jsonl")) if l.strip()]
    idx = {(s, n): i for i, (s, n, _) in enumerate(tools)}
    gold = []
    for t in tasks:
        g = {idx[(t["server"], t["tool"])]}
        if t["server"] == "filesystem" and t["tool"] == "read_text_file" and ("filesystem", "read_file") in idx:
            g.add(idx[("filesystem", "read_file")])
        gold.append(g)
    return tools, tasks, gold


# ---- BM25 (tokenizer mirrors src/session/finder/text.rs loosely) ----
STOP = set("""about above after again all also am an and any are as at be been before being both but by can could did do does
each either else etc for from further had has have having he help her here him his how if in into is it its just kindly let lets
like me might more most must my need needs no nor not now of off on one only or other our ours out over own please same she should
so some such than that the their them then there these they this those through to too tool tools under until up us very via want
wants was we were what when where whether which while who whom why will with would you your yours""".split())

_case = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+[a-z]*")


def stem(w):
    if not w.isascii() or len(w) < 3:
        return w
    if len(w) == 3 and w.endswith("s") and not w.endswith("ss") and not w.endswith("us"):
        w = w[:-1]
    elif len(w) > 3:
        for suf, rep in (("ies", "y"), ("sses", "ss"), ("xes", "x"), ("ches", "ch"), ("shes", "sh")):
            if w.endswith(suf):
                w = w[: -len(suf)] + rep
                break
        else:
            if w.endswith("s") and not w.endswith("ss") and not w.endswith("us") and not w.endswith("is"):
                w = w[:-1]
        for suf in ("ing", "ed"):
            if w.endswith(suf) and len(w) - len(suf) >= 3 and re.search("[aeiouy]", w[: -len(suf)]):
                w = w[: -len(suf)]
                break
        for suf in ("ation", "ment", "ness", "ity", "er"):
            if w.endswith(suf) and len(w) - len(suf) >= 4:
                w = w[: -len(suf)]
                break
    if len(w) > 2 and w.endswith("e") and re.search("[aeiouy]", w[:-1]):
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]
    return w


def terms(text):
    out = []
    for run in re.findall(r"[^\W_]+", text):
        for part in _case.findall(run) or [run]:
            w = part.lower()
            if len(w) > 1 and w not in STOP:
                out.append(stem(w))
    return out


class BM25:
    def __init__(self, docs, k1=1.2, b=0.75):
        self.docs = [terms(d) for d in docs]
        self.k1, self.b = k1, b
        self.N = len(docs)
        self.avgdl = sum(map(len, self.docs)) / self.N
        self.tf = []
        df = {}
        for d in self.docs:
            c = {}
            for w in d:
                c[w] = c.get(w, 0) + 1
            self.tf.append(c)
            for w in c:
                df[w] = df.get(w, 0) + 1
        self.idf = {w: math.log(1 + (self.N - n + 0.5) / (n + 0.5)) for w, n in df.items()}

    def scores(self, q):
        qt = terms(q)
        s = np.zeros(self.N)
        for i, (c, d) in enumerate(zip(self.tf, self.docs)):
            L = len(d)
            for w in qt:
                f = c.get(w)
                if f:
                    s[i] += self.idf[w] * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * L / self.avgdl))
        return s


# ---- metrics ----
def metrics(S, gold, rows=None):
    """S: (nq, ntools) scores. Returns recall@1, recall@5, MRR over rows."""
    rows = range(len(gold)) if rows is None else rows
    r1 = r5 = mrr = 0.0
    n = 0
    for i in rows:
        order = np.argsort(-S[i], kind="stable")
        rank = min(int(np.where(order == g)[0][0]) for g in gold[i]) + 1
        r1 += rank == 1
        r5 += rank <= 5
        mrr += 1.0 / rank
        n += 1
    return r1 / n, r5 / n, mrr / n


def minmax(M):
    lo = M.min(axis=1, keepdims=True)
    hi = M.max(axis=1, keepdims=True)
    return (M - lo) / np.maximum(hi - lo, 1e-12)


def fuse(B, C, w):
    Bn = B / np.maximum(B.max(axis=1, keepdims=True), 1e-12)
    return Bn + w * minmax(C)


WS = [0.5, 1, 1.5, 2, 3, 4, 6]
VS = [0, 0.25, 0.5, 0.75, 1, 1.5, 2, 3]


def pick(fn, grid, gold, even):
    """choose grid value maximising (MRR, r1) on even rows."""
    best = None
    for g in grid:
        m = metrics(fn(g), gold, even)
        key = (m[2], m[0])
        if best is None or key > best[0]:
            best = (key, g)
    return best[1]


def server_texts():
    """per server: 'server: name description-first-sentence; name ...' (names + descriptions only)."""
    out = {}
    for f in sorted(glob.glob(os.path.join(CORPUS, "*.json"))):
        d = json.load(open(f))
        s = d["server"]
        out[s] = s + ": " + "; ".join(
            f"{t['name']} {(t.get('description') or '').strip().split('. ')[0].split(chr(10))[0]}" for t in d["tools"])
    return out
