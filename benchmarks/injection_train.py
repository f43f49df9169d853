"""Train the learned injection detector and judge it leave-one-family-out.

The labelled set comes from ``injection_data.py``. Features: the hashed character
n-grams, words, word stems and pairs of words and of stems of
:mod:`ctxassembly.text.injection_model` (counts over the square root of their number), the
rules' verdict on the text and the intent signals (word concepts: an act addressed to a
model, the acts on the reader's context as one feature, an imperative on the reader's
context, the ladder of how many concepts the text holds). A logistic regression
(scikit-learn, a dev dependency: inference needs numpy only) learns the weights
over n-gram columns scaled by how much more often the positives hold them than the
negatives (:data:`NB`, NBSVM), the scale folded back into the weights.

The threshold is the lowest probability at which the model flags at most ``--target``
of the chunks of the held-out half of each dev corpus (chunks the negatives were not
taken from) and at most :data:`BAR` (0.2%, the acceptance bar) of all the chunks of each
of those, of PyMdown and of pip (the model flags a chunk when a sentence, or two neighbouring sentences, reach it).

Leave-one-family-out: for each family, a model trained without it (its threshold chosen
the same way) is judged on it: each payload planted in a real chunk (glued to its end,
as its own paragraph, after a heading) counts as removed when no five-word run of it
survives the cut of rules and model. Rules alone, model alone, both; on the family's
first-written payloads and on all of them. ``--shapes``: the same with a shape or channel
left out (every family's payloads of that shape) instead of a family.

False flags of the final model (chunks flagged by the rules or the model): every chunk
of every dev corpus (``--corpus`` adds one, e.g. a corpus kept outside the project) and
the READMEs of the installed distributions.

Two stages: the first fits everything on the first data (English and six languages); the
second fits only the second table (n-grams with a letter past Latin-1) on all of it, the
rest held, then the threshold for other languages on held-out chunks of real text
(``--base``: the first stage read from a model file, e.g. the shipped one). ``--langs``:
the second stage with a group of languages left out (every payload, benign and real text
of it; the lexicon keeps their words), judged on their payloads and on chunks of their
held-out real text. ``--writers``: the first stage with one English writer's rows left out
(``benchmarks/data/english``), judged on its payloads and near misses, against a first stage
trained with no writer's rows: what the other writers' text buys on a register nobody
trained on.

    python benchmarks/injection_train.py [--write] [--shapes] [--langs] [--writers] [--base PATH] [--corpus PATH ...]

``--write`` saves the final model to ``ctxassembly/data/injection_model.npz`` (``--out PATH``:
elsewhere). The training reads nothing from the running environment (other projects' docs
come from ``data/installed/``), so a retrain rebuilds the shipped file byte for byte; a
slow test holds it (``tests/test_injection_retrain.py``): a change to the rules, whose
verdict is a feature, needs ``--write`` after it.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

# OpenBLAS picks its kernels by the CPU it runs on, and an AVX-512 kernel sums in another
# order than an AVX2 one: the same retrain on two x86-64 machines of one kind wrote two
# models (the shipped one on AVX2, a different one on an AVX-512 Xeon). The AVX2 kernel runs
# on both, so a retrain asks for it before numpy is loaded (unless the caller chose one).
if platform.machine() in ("x86_64", "AMD64"):
    os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")

import numpy as np  # after the kernel is chosen
from injection import survives
from injection_data import DEV, FAMILIES, build, half, translations
from installed_texts import readmes
from scipy import sparse
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression

from ctxassembly.jsonl import read_jsonl
from ctxassembly.text.injection import find_injections
from ctxassembly.text.injection_model import (
    DIM,
    TARGET_FALSE_FLAGS,
    LinearModel,
    featurize,
    other_rows,
    text_signals,
)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "ctxassembly" / "data" / "injection_model.npz"
REDTEAM = ROOT / "tests" / "data" / "redteam.jsonl"
BENIGN = ROOT / "tests" / "data" / "benign.jsonl"
# inverse regularisation: 4 overfitted the positives fillers ("task", "version 2.0"): 0.9% false
# flags on a corpus kept out of training; 1 kept it at 0.15%. With the English writers' rows,
# leave one writer out (the other five trained on), payloads removed / their near misses
# flagged: C 1 44.6% / 58, 0.5 47.4% / 66, 0.35 46.0% / 73, 0.25 41.8% / 66 (of 1,860)
C = 0.5


def matrix(texts: list[str]) -> sparse.csr_matrix:
    """One row per text: its n-gram counts over the square root of their number, then the
    signals (the rules' verdict, the concepts), the text read as one sentence."""
    rows, cols, vals = [], [], []
    for i, text in enumerate(texts):
        _, ids = featurize(text)
        if ids.size:
            uniq, counts = np.unique(ids, return_counts=True)
            rows.append(np.full(uniq.size, i))
            cols.append(uniq)
            vals.append(counts / np.sqrt(ids.size))
    grams = sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(len(texts), DIM)
    )
    sig = text_signals(texts, [bool(find_injections(t)) for t in texts])
    return sparse.hstack([grams, sparse.csr_matrix(sig)], format="csr")


#: Naive Bayes scaling of the n-gram columns (NBSVM, Wang and Manning 2012): each column is
#: multiplied by ``1 - NB + NB * |r|`` before the fit (``r``: its log-count ratio, positives
#: over negatives) and the weights by the same after, so the model stays linear in the same
#: features. Leave one writer out, payloads removed / their near misses flagged (of 1,860):
#: 0 48.9% / 55, 0.5 52.8% / 61, 1 53.3% / 59 (installed READMEs flagged 3 of 1,327 against
#: 0 at 0.5). It shifts weight from the intent signals to English n-grams, so a sentence in
#: another language reads the signals through weights of its own (:func:`fit_second`)
NB = 0.5
#: the other languages' threshold flags at most this share of ``--target`` of their real
#: text's chunks: with signal weights of their own, their pairs and neighbours flag more
#: than their single sentences (at the full target: 18 of 6,979 chunks, 0.26%; at half:
#: 14, 0.20%; leave one language out, held-out real text 35 -> 24 of 5,201 chunks)
OTHER_TARGET = 0.5


def nb_scale(x: sparse.csr_matrix, y: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """The factor of each n-gram column of ``x`` (the first ``DIM``): ``1 - NB + NB * |r|``,
    ``r`` the log ratio of its share of the positives' and of the negatives' n-grams
    (present or not, ``alpha`` added to every count)."""
    grams = (x[:, :DIM] > 0).astype(np.float64)
    p = alpha + np.asarray(grams[y == 1].sum(axis=0)).ravel()
    q = alpha + np.asarray(grams[y == 0].sum(axis=0)).ravel()
    return 1 - NB + NB * np.abs(np.log((p / p.sum()) / (q / q.sum())))


def fit(x: sparse.csr_matrix, y: np.ndarray, weight: np.ndarray | None = None) -> LinearModel:
    pos = max(int(y.sum()), 1)
    clf = LogisticRegression(C=C, class_weight={0: 1.0, 1: (len(y) - pos) / pos / 4}, max_iter=2000, solver="liblinear")
    scale = np.concatenate([nb_scale(x, y), np.ones(x.shape[1] - DIM)])
    clf.fit(x @ sparse.diags(scale), y, sample_weight=weight)
    coef = clf.coef_[0] * scale
    return LinearModel(
        coef[:DIM].astype(np.float16).astype(np.float32),
        coef[DIM:].astype(np.float32),
        float(clf.intercept_[0]),
        0.5,
    )


def fit_second(x: sparse.csr_matrix, y: np.ndarray, base: LinearModel, other: np.ndarray) -> LinearModel:
    """The second table (n-grams and words with a letter past Latin-1) fitted on ``x``,
    everything else of ``base`` held: the first table, the signal weights, the bias. The
    same objective as :func:`fit` (L2, ``C``, the positives' weight), minimised by L-BFGS,
    so that what other scripts teach moves no weight that English text reads. The rows in
    ``other`` (those that read as another language, each read as one sentence:
    ``other_rows(text, whole=True)``) read the signals through weights of their own, fitted
    here too and shipped as the model's ``other_signal_weights``."""
    half_dim = DIM // 2
    grams = x[:, :DIM].tocsr()
    second = grams[:, half_dim:].tocsr()
    # a row in another language reads the signals through the weights fitted here, an
    # English row through the first stage's
    sig = x[:, DIM:].toarray()
    fixed = grams[:, :half_dim] @ base.weights[:half_dim] + np.where(other, 0.0, sig @ base.signal_weights) + base.bias
    pos = max(int(y.sum()), 1)
    weight = np.where(y == 1, (len(y) - pos) / pos / 4, 1.0)
    sign = 2.0 * y - 1.0
    start = base.weights[half_dim:].astype(np.float64)
    scale = nb_scale(x, y)[half_dim:]
    second = (second @ sparse.diags(scale)).tocsr()
    start = start / scale
    second_t = second.T.tocsr()
    k = second.shape[1]

    def loss(v: np.ndarray) -> tuple[float, np.ndarray]:
        w, own = v[:k], v[k:]
        margin = -sign * (fixed + second @ w + np.where(other, sig @ own, 0.0))
        g = weight * -sign / (1.0 + np.exp(-margin))
        grad = np.concatenate([second_t @ g, sig[other].T @ g[other]])
        return C * float(weight @ np.logaddexp(0.0, margin)) + 0.5 * float(v @ v), C * grad + v

    v0 = np.concatenate([start, base.signal_weights.astype(np.float64)])
    v = minimize(loss, v0, jac=True, method="L-BFGS-B", options={"maxiter": 2000}).x
    weights = np.concatenate([base.weights[:half_dim], (v[:k] * scale).astype(np.float16).astype(np.float32)])
    own = v[k:].astype(np.float32)
    return LinearModel(weights, base.signal_weights, base.bias, base.threshold, other_signal_weights=own)


#: real text of the other languages grouped as a retriever would see a translated page:
#: this many consecutive texts (messages, manual sentences) of one language and source
CHUNK_TEXTS = 5


def pseudo_chunks(rows: list[dict[str, str]]) -> list[str]:
    groups: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        groups.setdefault((r["lang"], r["source"]), []).append(r["text"])
    return [" ".join(v[i : i + CHUNK_TEXTS]) for v in groups.values() for i in range(0, len(v), CHUNK_TEXTS)]


def choose_other_threshold(model: LinearModel, chunks: list[str], target: float) -> float:
    """The lowest threshold, not below the English one, at which at most ``target`` of the
    chunks of real text in the other languages have a sentence read as another language
    (:func:`~ctxassembly.text.injection_model.other_rows`) flagged: the English rule, on
    text of the languages the second table reads."""
    best = []
    for chunk in chunks:
        first, other = other_rows(chunk)
        ends = [*first[1:].tolist(), len(chunk)]
        sentences = [chunk[s:e] for s, e, o in zip(first.tolist(), ends, other.tolist(), strict=True) if o]
        best.append(float(model.probabilities(sentences).max()) if sentences else 0.0)
    return max(model.threshold, _lowest_cut(np.array(best), target))


def second_stage(
    x: sparse.csr_matrix,
    y: np.ndarray,
    base: LinearModel,
    chunks: list[str],
    target: float,
    *,
    other: np.ndarray,
) -> LinearModel:
    """:func:`fit_second`, then its threshold for other languages (``chunks``: real text)."""
    model = fit_second(x, y, base, other)
    return replace(model, other_threshold=choose_other_threshold(model, chunks, target * OTHER_TARGET))


def held_out_chunks() -> dict[str, list[str]]:
    return {
        name: [str(r["text"]) for r in read_jsonl(path) if half(str(r.get("id", ""))) == 1]
        for name, path in DEV.items()
    }


#: the false-flag rate no dev corpus may exceed over all its chunks (the acceptance bar)
BAR = 0.002
#: the corpora the bar is held on: the four the negatives come from, then every other corpus
#: vendored in benchmarks/data/ (a folder with a source.json), none of them trained on (a
#: variant of the model chosen on the four alone flagged 0.54% of PyMdown; pip is a dev corpus
#: since its first scoring, and the override fold's threshold chosen without it flagged one of
#: its 362 chunks; Flask, held out, had 3 of its 1,181 flagged at first sight, Click 3 of
#: its 497, see benchmarks/README.md)
BAR_CORPORA = {
    **DEV,
    **{
        p.name: p / "corpus.jsonl.xz"
        for p in sorted((ROOT / "benchmarks" / "data").iterdir())
        if (p / "source.json").exists() and p.name not in DEV
    },
}


#: which half of the installed packages' READMEs the threshold's bar is held on (``--readme-bar``);
#: the other half is never read before the final count
READMES_BAR = "half 0"


def readme_halves() -> tuple[list[str], list[str]]:
    """The installed distributions' READMEs (:func:`installed_texts.readmes`), split by package name:
    the chunks of the packages of half 0, then those of half 1."""
    out: tuple[list[str], list[str]] = ([], [])
    for r in readmes():
        out[half(str(r["id"]).split("#", 1)[0])].append(str(r["text"]))
    return out


def choose_threshold(
    model: LinearModel, corpora: dict[str, list[str]], target: float, whole: dict[str, list[str]] | None = None
) -> float:
    """The lowest threshold at which no corpus has more than ``target`` of the chunks of
    its held-out half flagged (``corpora``), nor more than :data:`BAR` of all its chunks
    (``whole``: on a corpus of 413 chunks, none). The positives weigh more than the
    negatives in training, so the model's 0.5 is no natural cut: it may lie below."""
    cut = 0.05
    for limit, sets in ((target, corpora), (BAR, whole or {})):
        for texts in sets.values():
            cut = max(cut, _lowest_cut(model.probabilities(texts), limit))
    return min(cut, 0.999)


def _lowest_cut(scores: np.ndarray, limit: float) -> float:
    """The lowest threshold that flags at most ``limit`` of ``scores`` (0 when that allows all)."""
    ranked = np.sort(scores)[::-1]
    allowed = int(limit * len(ranked))
    return float(ranked[allowed]) + 1e-6 if allowed < len(ranked) else 0.0


_MARKUP = ("html_comment", "md_comment", "alt_text", "link_title", "hidden_html", "code_comment", "rst_comment")


def _style(row: dict[str, str]) -> tuple[str, str]:
    shape, _, channel = row.get("style", "").partition("/")
    return shape, channel


#: shapes and channels, each a group a model is trained without (the blind set's kinds)
SHAPE_GROUPS = {
    "polite": lambda r: _style(r)[0] == "polite",
    "passive": lambda r: _style(r)[0] == "passive",
    "third person": lambda r: _style(r)[0] == "third_person",
    "split over two sentences": lambda r: _style(r)[0] == "split",
    "conditional": lambda r: _style(r)[0] == "conditional",
    "other languages": lambda r: r.get("lang", "en") != "en",
    "markup channels": lambda r: _style(r)[1] in _MARKUP or _style(r)[0] == "comment",
    "tool and transcript": lambda r: (
        _style(r)[1] in ("tool", "transcript") or _style(r)[0] in ("tool", "transcript", "fence")
    ),
    "encodings": lambda r: _style(r)[0] in ("encoded", "split_words"),
}

#: the other languages, each group a model is trained without (related languages together,
#: so that a held-out language has no near relative in training): the figure for a
#: language nobody wrote data for (its lexicon words stay in)
LANG_GROUPS = (
    "ru uk", "pl cs", "tr", "hu fi", "ro", "el", "sv da nb", "id vi", "ar fa", "he", "ja zh", "ko", "th", "hi",
)  # fmt: skip

PLACES = {
    "end": lambda host, p: f"{host.rstrip()} {p}",
    "paragraph": lambda host, p: f"{host.rstrip()}\n\n{p}\n",
    "after_heading": lambda host, p: f"{host.rstrip()}\n\nUsage notes\n-----------\n\n{p}\n",
}


def cut(text: str, spans: list[tuple[int, int, str]]) -> str:
    out, last = [], 0
    for s, e, _ in sorted(spans):
        if s >= last:
            out.append(text[last:s])
            last = e
        else:
            last = max(last, e)
    out.append(text[last:])
    return "".join(out)


def planted_recall(model: LinearModel | None, payloads: list[str], hosts: list[str], seed: int = 3) -> dict[str, float]:
    """Removed share of the payloads planted in real chunks: rules, model, both."""
    rnd = random.Random(seed)
    texts, pays = [], []
    for p in payloads:
        for plant in PLACES.values():
            texts.append(plant(rnd.choice(hosts), p))
            pays.append(p)
    rule_spans = [list(find_injections(t)) for t in texts]
    model_spans = model.spans_many(texts, rule_spans) if model is not None else [[] for _ in texts]
    got = Counter[str]()
    for t, p, r, m in zip(texts, pays, rule_spans, model_spans, strict=True):
        got["rules"] += not survives(p, cut(t, r))
        got["model"] += not survives(p, cut(t, list(m)))
        got["both"] += not survives(p, cut(t, r + list(m)))
    return {k: got[k] / max(len(texts), 1) for k in ("rules", "model", "both")}


def false_flags(model: LinearModel, texts: list[str]) -> tuple[int, int, int]:
    """(chunks, flagged by the rules, flagged by rules or model)."""
    rules = [list(find_injections(t)) for t in texts]
    spans = []
    for i in range(0, len(texts), 200):
        spans += model.spans_many(texts[i : i + 200], rules[i : i + 200])
    return len(texts), sum(bool(r) for r in rules), sum(bool(r) or bool(m) for r, m in zip(rules, spans, strict=True))


def _cells(rec: dict[str, float]) -> list[str]:
    return [f"{rec['rules']:.1%}", f"{rec['model']:.1%}", f"{rec['both']:.1%}"]


def main(argv: list[str] | None = None) -> int:  # noqa: PLR0915 (a report, read top to bottom)
    global C, NB  # noqa: PLW0603 (one run, one regularisation and one scaling)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"save the final model to {OUT.relative_to(ROOT)}")
    ap.add_argument("--out", type=Path, help="save the final model here instead (the shipped file stays)")
    ap.add_argument(
        "--target", type=float, default=TARGET_FALSE_FLAGS, help="chunk false-flag rate the threshold allows per corpus"
    )
    ap.add_argument("--corpus", action="append", type=Path, default=[], help="another corpus for false flags")
    ap.add_argument(
        "--base",
        type=Path,
        help="take the first table, signal weights, bias and threshold from this model (e.g. the shipped one) "
        "instead of fitting them; only the second table is fitted",
    )
    ap.add_argument("--no-lofo", action="store_true")
    ap.add_argument("--shapes", action="store_true", help="also the leave-one-shape-out table")
    ap.add_argument("--langs", action="store_true", help="also the leave-one-language-out table")
    ap.add_argument("--writer-weight", type=float, default=1.0, help="weight of the English writers' rows")
    ap.add_argument("--nb", type=float, default=NB, help="Naive Bayes scaling of the n-gram columns (0: none)")
    ap.add_argument("--C", type=float, default=C, help="inverse regularisation of the first stage")
    ap.add_argument(
        "--writer-rows", choices=("all", "payloads", "benign"), default="all", help="which English writers' rows"
    )
    ap.add_argument("--writers", action="store_true", help="also the leave-one-writer-out table (English writers)")
    ap.add_argument(
        "--readme-bar",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="hold the bar on half of the installed packages' READMEs too (text no stage trained on)",
    )
    args = ap.parse_args(argv)
    C = args.C
    NB = args.nb
    t0 = time.perf_counter()
    rows = build()
    if args.writer_rows != "all":  # keep every row but the writers' of the other kind
        benign = args.writer_rows == "benign"
        rows = [r for r in rows if not r.get("writer") or (r["family"] == "benign") == benign]
    texts = [r["text"] for r in rows]
    y = np.array([r["family"] != "benign" for r in rows], dtype=np.int64)
    fam = np.array([r["family"] for r in rows])
    lang = np.array([r.get("lang", "en") for r in rows])
    first = np.array([r.get("batch") == "first" for r in rows])
    # the first data (English and the six languages of the first payloads) fits the first
    # stage; the other languages' files and the real text of every language only the second
    old = np.array([r.get("batch") != "languages" for r in rows])
    writer = np.array([r.get("writer", "") for r in rows])
    x = matrix(texts)
    reads = np.array([bool(other_rows(t, whole=True)[1].any()) for t in texts])
    corpora = held_out_chunks()
    whole = {name: [str(r["text"]) for r in read_jsonl(path)] for name, path in BAR_CORPORA.items()}
    readmes = readme_halves()
    if args.readme_bar:  # half of the packages' READMEs held like a held-out half: text no stage trained on
        corpora[f"installed READMEs, half of the packages ({READMES_BAR})"] = readmes[0]
    hosts = [t for t in corpora["pytest"] if 300 <= len(t) <= 1500]
    real = [r for r in translations() if half(r["text"]) == 1]
    real_chunks = pseudo_chunks(real)
    counts = Counter(r["family"] for r in rows)
    print(f"labelled set: {len(rows)} texts ({dict(counts)}), features in {time.perf_counter() - t0:.0f}s")
    print(
        f"first stage: {int(old.sum())} texts (English and {', '.join(sorted(set(lang[old]) - {'en'}))}); "
        f"second stage: all; real text of the other languages held out: {len(real)} texts, "
        f"{len(real_chunks)} chunks of {CHUNK_TEXTS}"
    )

    row_weight = np.where(writer != "", args.writer_weight, 1.0)

    def first_stage(train: np.ndarray) -> LinearModel:
        model = fit(x[train], y[train], row_weight[train])
        return replace(model, threshold=choose_threshold(model, corpora, args.target, whole))

    if not args.no_lofo:
        print(
            "\nleave-one-family-out: both stages trained without a family (every batch of it, every language), "
            "judged on its payloads planted in real chunks (end, paragraph, after a heading), share removed "
            "(rules / model / rules + model); `first` = the family's first-written payloads, `all` = with the "
            "composed ones (English and the first six languages), `writers` = the English writers' payloads, "
            "`other languages` = its payloads in the other languages' files (at most 300)"
        )
        print(
            "| held-out family | first | rules | model | both | all | rules | model | both "
            "| writers | rules | model | both | other languages | rules | model | both |"
        )
        print("|---|" + "---:|" * 16)
        columns = (("first", first), ("all", old & (writer == "")), ("writers", writer != ""), ("other", ~old))
        totals = {name: Counter[str]() for name, _ in columns}
        for family in FAMILIES:
            out = fam != family
            model = second_stage(x[out], y[out], first_stage(old & out), real_chunks, args.target, other=reads[out])
            cells = [family]
            for name, sel in columns:
                payloads = [t for t, f, s in zip(texts, fam, sel, strict=True) if f == family and s]
                if name == "other":
                    payloads = random.Random(1).sample(payloads, min(300, len(payloads)))
                rec = planted_recall(model, payloads, hosts)
                totals[name].update({"n": len(payloads), **{k: v * len(payloads) for k, v in rec.items()}})
                cells += [str(len(payloads)), *_cells(rec)]
            print("| " + " | ".join(cells) + " |", flush=True)
        cells = ["all"]
        for name, _ in columns:
            t = totals[name]
            cells += [str(t["n"])] + [f"{t[k] / max(t['n'], 1):.1%}" for k in ("rules", "model", "both")]
        print("| " + " | ".join(cells) + " |")

    writers = sorted(set(writer) - {""})
    if args.writers and writers:
        print(
            "\nleave-one-writer-out (first stage): each English writer's rows (payloads and near misses) held "
            "out, judged on its payloads planted as above and on its near misses alone (flagged by rules or "
            "model); trained with no writer's rows, then with the other writers'"
        )
        print(
            "| held-out writer | payloads | removed, no writer | removed, other writers | near misses "
            "| flagged, no writer | flagged, other writers |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        none = first_stage(old & (writer == ""))
        for name in writers:
            held = writer == name
            others = first_stage(old & ~held)
            payloads = [texts[i] for i in np.flatnonzero(held & (y == 1))]
            benign = [texts[i] for i in np.flatnonzero(held & (y == 0))]
            cells = [name, str(len(payloads))]
            cells += [f"{planted_recall(m, payloads, hosts)['both']:.1%}" for m in (none, others)]
            cells += [str(len(benign))] + [str(false_flags(m, benign)[2]) for m in (none, others)]
            print("| " + " | ".join(cells) + " |", flush=True)

    if args.shapes:
        print(
            "\nleave-one-shape-out (first stage): trained without every payload of a shape or channel (all "
            "families), judged on them (at most 400 of each, planted as above), share removed"
        )
        print("| held-out shape | payloads | rules | model | rules + model |")
        print("|---|---:|---:|---:|---:|")
        for shape, test in SHAPE_GROUPS.items():
            held = np.array([bool(y[i]) and bool(old[i]) and test(rows[i]) for i in range(len(rows))])
            model = first_stage(old & ~held)
            payloads = [texts[i] for i in np.flatnonzero(held)]
            payloads = random.Random(1).sample(payloads, min(400, len(payloads)))
            rec = planted_recall(model, payloads, hosts)
            print(f"| {shape} | {len(payloads)} | " + " | ".join(_cells(rec)) + " |", flush=True)

    base = LinearModel.load(args.base) if args.base else first_stage(old)
    if args.langs:
        print(
            "\nleave-one-language-out (second stage): trained without a group of languages (every payload, "
            "benign text and real text of it; the first stage and the lexicon keep theirs), judged on its "
            "payloads (at most 300, planted as above) and on chunks of its held-out real text (flagged by rules "
            "or model)"
        )
        print("| held-out languages | payloads | rules | model | rules + model | real-text chunks | flagged |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for group in LANG_GROUPS:
            codes = group.split()
            held = np.isin(lang, codes)
            if not held.any():
                continue
            others = pseudo_chunks([r for r in real if r["lang"] not in codes])
            model = second_stage(x[~held], y[~held], base, others, args.target, other=reads[~held])
            payloads = [texts[i] for i in np.flatnonzero(held & (y == 1))]
            payloads = random.Random(1).sample(payloads, min(300, len(payloads)))
            rec = planted_recall(model, payloads, hosts)
            n, _, both = false_flags(model, pseudo_chunks([r for r in real if r["lang"] in codes]))
            flagged = f"{both} ({both / max(n, 1):.2%})"
            print(f"| {group} | {len(payloads)} | " + " | ".join(_cells(rec)) + f" | {n} | {flagged} |", flush=True)

    model = second_stage(x, y, base, real_chunks, args.target, other=reads)
    print(
        f"\nfinal model: threshold {model.threshold:.3f}, for other languages {model.other_threshold:.3f}"
        + (f" (first stage from {args.base})" if args.base else "")
    )
    own = [str(r["text"]) for r in read_jsonl(REDTEAM)]
    rec = planted_recall(model, own, hosts)
    print(
        f"own red team ({len(own)} payloads x {len(PLACES)} placements): rules {rec['rules']:.1%}, "
        f"model {rec['model']:.1%}, both {rec['both']:.1%}"
    )
    benign = [str(r["text"]) for r in read_jsonl(BENIGN)]
    n, r_flags, both = false_flags(model, benign)
    print(f"own benign near misses: {n}; flagged by rules {r_flags}, by rules or model {both}")
    print("\nfalse flags per corpus (every chunk): rules alone, rules + model")
    print("| corpus | chunks | rules | rate | rules + model | rate |")
    print("|---|---:|---:|---:|---:|---:|")
    sources: list[tuple[str, list[str]]] = list(whole.items())
    sources += [
        (p.parent.name if p.name.startswith("corpus") else p.name, [str(r["text"]) for r in read_jsonl(p)])
        for p in args.corpus
    ]
    sources.append((f"installed READMEs, half of the packages ({READMES_BAR})", readmes[0]))
    sources.append(("installed READMEs, the other half of the packages (never read)", readmes[1]))
    sources.append(("installed READMEs, all", readmes[0] + readmes[1]))
    sources.append((f"real text of the other languages (held-out half, chunks of {CHUNK_TEXTS})", real_chunks))
    for name, chunks in sources:
        n, r_flags, both = false_flags(model, chunks)
        print(f"| {name} | {n} | {r_flags} | {r_flags / n:.2%} | {both} | {both / n:.2%} |")
    by_lang = []
    for code in sorted({r["lang"] for r in real}):
        n, _, both = false_flags(model, pseudo_chunks([r for r in real if r["lang"] == code]))
        by_lang.append(f"{code} {both}/{n}")
    print("real-text chunks flagged per language: " + ", ".join(by_lang))
    if args.write or args.out:
        out = args.out or OUT
        model.save(out)
        print(f"\nwrote {out} ({out.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
