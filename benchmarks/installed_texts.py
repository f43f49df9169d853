"""Other projects' documentation, as the installed packages ship it, pinned in a snapshot.

The injection detector's training reads three kinds of text written by other projects:
the docstrings of installed packages (LLM libraries among them) and the Markdown and reST
files shipped inside them, as negatives, and the packages' long descriptions (READMEs), on
which the threshold's rule holds one half and the false-flag table counts the other.
Read from the running environment, those texts move with every install: a retrain after
transformers was reinstalled chose 0.780 / 0.859 where the shipped model reads
0.782 / 0.860. They are read from ``data/installed/`` instead, a snapshot this module
writes (``--snapshot``) and reads; the snapshot's README lists where it came from and
``LICENSES.txt`` each distribution's licence.

    python benchmarks/installed_texts.py --snapshot   # rewrite data/installed/ from this environment
    python benchmarks/installed_texts.py              # what the snapshot holds, and how it differs from here
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import lzma
import random
import re
import site
from collections import Counter
from collections.abc import Iterator
from importlib.metadata import distributions
from pathlib import Path

from ctxassembly.jsonl import read_jsonl
from ctxassembly.text.injection_model import sentence_bounds

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "benchmarks" / "data" / "installed"
FILES = {"docstrings": "docstrings.jsonl.xz", "package_docs": "package_docs.jsonl.xz", "readmes": "readmes.jsonl.xz"}

#: installed packages whose docstrings are read for negatives (LLM libraries among them)
PACKAGES = (
    "langchain_core",
    "llama_index.core",
    "haystack",
    "transformers",
    "tiktoken",
    "pydantic",
    "click",
    "jinja2",
    "requests",
    "urllib3",
    "sqlalchemy",
    "numpy",
    "huggingface_hub",
    "sentence_transformers",
    "openai",
)
#: the standard library's modules read beside them (tasks, tokens, passwords, systems in every sense)
STDLIB = ("stdlib", "asyncio", "concurrent", "multiprocessing", "email", "http", "logging")

#: the words that make a sentence of other projects' docs a negative worth learning from
TRIGGER = re.compile(
    r"\b(?:prompt|password|passwords|token|tokens|secret|secrets|credential|credentials|instruction|instructions|"
    r"ignore|ignored|ignores|disregard|forget|override|overrides|system|assistant|model|models|agent|answer|reply|"
    r"respond|warning|warnings|notice|admin|administrator|must|always|never|reveal|send|email|you|your|note|"
    r"important|deprecated|security|key|keys)\b",
    re.IGNORECASE,
)


def sentences(text: str) -> Iterator[str]:
    """The sentences of ``text`` of 3 to 80 words, as the training set cuts them."""
    for s, e in sentence_bounds(text):
        piece = text[s:e].strip()
        if 3 <= len(piece.split()) <= 80:
            yield piece


# --- read from the snapshot (what training and the false-flag table use) -------------------


def docstring_sentences() -> list[dict[str, str]]:
    """The near-miss sentences of the installed packages' docstrings (``source``: the package)."""
    return [
        {"family": "benign", "style": "docstring", "lang": "en", "text": str(r["text"]), "source": str(r["source"])}
        for r in read_jsonl(SNAPSHOT / FILES["docstrings"])
    ]


def package_doc_sentences() -> list[dict[str, str]]:
    """The near-miss sentences of the Markdown and reST files shipped inside the packages."""
    return [
        {"family": "benign", "style": "package_doc", "lang": "en", "text": str(r["text"]), "source": "packages"}
        for r in read_jsonl(SNAPSHOT / FILES["package_docs"])
    ]


def readmes() -> list[dict[str, object]]:
    """The distributions' long descriptions in chunks of ~1,500 characters (``id``: name#n)."""
    return [{"id": str(r["id"]), "text": str(r["text"])} for r in read_jsonl(SNAPSHOT / FILES["readmes"])]


# --- read from the running environment (``--snapshot``) -------------------------------------


def _package_files(name: str) -> list[Path]:
    if name == "stdlib":
        return sorted(p for p in Path(ast.__file__).parent.glob("*.py") if not p.name.startswith("_"))
    spec = importlib.util.find_spec(name.split(".", maxsplit=1)[0])
    if spec is None or not spec.submodule_search_locations:
        return []
    base = Path(next(iter(spec.submodule_search_locations)))
    if "." in name:
        base = base / name.split(".", 1)[1].replace(".", "/")
    return sorted(base.rglob("*.py"))


def environment_docstrings(max_files: int = 400, seed: int = 9) -> list[dict[str, str]]:
    rnd = random.Random(seed)
    out = []
    for name in (*PACKAGES, *STDLIB):
        files = _package_files(name)
        rnd.shuffle(files)
        for f in files[:max_files]:
            try:
                tree = ast.parse(f.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError, OSError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node)
                    out += [{"text": s, "source": name} for s in sentences(doc or "") if TRIGGER.search(s)]
    return out


def environment_package_docs() -> list[dict[str, str]]:
    out = []
    for root in [Path(p) for p in site.getsitepackages()] or [Path(ast.__file__).parent]:
        for f in sorted([*root.rglob("*.md"), *root.rglob("*.rst")]):
            try:
                text = f.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            out += [{"text": s} for s in sentences(text) if TRIGGER.search(s)]
    return out


#: this project's own distributions: its docs are no other project's
OWN = ("ctxassembly", "langchain-ctxassembly", "llamaindex-ctxassembly")


def environment_readmes() -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for dist in distributions():
        body = dist.metadata.get_payload() or ""  # type: ignore[attr-defined]
        if len(body) < 200 or dist.metadata["Name"] in OWN:
            continue
        name, buf = dist.metadata["Name"], ""
        for para in re.split(r"\n\s*\n", body):
            if buf and len(buf) + len(para) > 1500:
                rows.append({"id": f"{name}#{len(rows)}", "text": buf})
                buf = ""
            buf += para + "\n\n"
        if buf.strip():
            rows.append({"id": f"{name}#{len(rows)}", "text": buf})
    return rows


def _licence(dist: object) -> str:
    meta = dist.metadata  # type: ignore[attr-defined]
    lic = (meta.get("License-Expression") or meta.get("License") or "").split("\n")[0].strip()
    if not lic or lic.upper() == "UNKNOWN" or len(lic) > 60:
        lic = "; ".join(c.split(" :: ")[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License")) or (
            lic[:60] + "…" if lic else "not stated"
        )
    return lic


def _write(name: str, rows: list[dict[str, str]]) -> None:
    raw = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    (SNAPSHOT / FILES[name]).write_bytes(lzma.compress(raw, preset=9 | lzma.PRESET_EXTREME))


def snapshot() -> dict[str, int]:
    """Rewrite the snapshot from this environment; the rows of each file."""
    SNAPSHOT.mkdir(parents=True, exist_ok=True)
    found = {
        "docstrings": environment_docstrings(),
        "package_docs": environment_package_docs(),
        "readmes": environment_readmes(),
    }
    for name, rows in found.items():
        _write(name, rows)
    named = sorted(
        {
            (d.metadata["Name"], d.version, _licence(d))
            for d in distributions()
            if d.metadata["Name"] not in (None, *OWN)
        },
        key=lambda x: x[0].lower(),
    )
    lines = [f"{n} {v}: {lic}" for n, v, lic in named]
    (SNAPSHOT / "LICENSES.txt").write_text(
        "The distributions installed when the snapshot was taken, their versions and the licences their\n"
        "metadata states. The snapshot holds sentences of their docstrings and shipped docs and their\n"
        "long descriptions, each under its distribution's licence.\n\n" + "\n".join(lines) + "\n",
        encoding="utf-8",
    )
    return {k: len(v) for k, v in found.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--snapshot", action="store_true", help="rewrite data/installed/ from this environment")
    args = ap.parse_args(argv)
    if args.snapshot:
        for k, n in snapshot().items():
            print(f"{FILES[k]}: {n} rows")
        return 0
    pinned = {
        "docstrings": [r["text"] for r in docstring_sentences()],
        "package_docs": [r["text"] for r in package_doc_sentences()],
        "readmes": [str(r["text"]) for r in readmes()],
    }
    here = {
        "docstrings": [r["text"] for r in environment_docstrings()],
        "package_docs": [r["text"] for r in environment_package_docs()],
        "readmes": [r["text"] for r in environment_readmes()],
    }
    for k in FILES:
        a, b = Counter(pinned[k]), Counter(here[k])
        print(
            f"{k}: {sum(a.values())} in the snapshot, {sum(b.values())} here; only in the snapshot "
            f"{sum((a - b).values())}, only here {sum((b - a).values())}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
