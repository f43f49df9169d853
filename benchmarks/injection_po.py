"""Real benign text in many languages for the injection detector: translated software and manuals.

The learned detector is trained on documentation sentences in English and on instruction-
like text in many languages; without real text of those languages among the negatives,
any n-gram of a language counts for an instruction. Translations written by people for
people are such text, in dozens of languages:

- a web framework's message catalogues (``--django``: the ``.po`` files of a Django source
  tree, BSD-3; ``pip download --no-deps --no-binary :all: django==5.1.4`` and unpack it):
  forms, errors, the admin site, authentication (passwords, tokens, permissions);
- the compiled message catalogues of system programs (``--mo``: a ``locale`` folder such as
  Debian's ``/usr/share/locale``: PAM's password prompts, apt, dpkg, git, coreutils' help);
- translated manual pages and FAQs (``--doc``: folders unpacked from Debian's
  ``manpages-<lang>`` packages, rendered with ``groff``; ``debian-faq-ko``'s HTML):
  technical prose about passwords, keys, options, warnings and what to ignore.

Each source gives at most :data:`CAP` texts a language (a seeded sample), placeholders and
markup removed, one JSON line each (``lang``, ``text``, ``source``), written to
``benchmarks/data/langs/translations.jsonl.xz``. What was read to build the vendored file is
in ``benchmarks/data/langs/README.md``.

    python benchmarks/injection_po.py --django /tmp/Django-5.1.4 --mo /usr/share/locale \\
        --doc /tmp/deb/x_manpages-ru ...
"""

from __future__ import annotations

import argparse
import gzip
import json
import lzma
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import polib

ROOT = Path(__file__).resolve().parents[1]
LANGS = ROOT / "benchmarks" / "data" / "langs"
OUT = LANGS / "translations.jsonl.xz"
#: the six languages of the detector's first data besides English
FIRST = ("de", "fr", "es", "it", "pt", "nl")
#: locale names that differ from the data's codes
ALIASES = {"zh_Hans": "zh", "zh_CN": "zh", "pt_BR": "pt", "pt-br": "pt", "nb_NO": "nb"}
#: texts a source gives a language at most (man pages: sentences; catalogues: messages)
CAP = 1200
# printf and format placeholders, HTML tags and entities, keyboard accelerators: what a
# user never reads as words
_PLACEHOLDER = re.compile(r"%\(\w+\)[sdrf]|%[-#0-9.lhz]*[sdiufxXcp]|\{\w*\}|<[^>]+>|&\w+;|_(?=\w)|\\n|\\t")
#: scripts written without spaces: a text of this many characters or more is a sentence
_MIN_CHARS = 8
#: spaced scripts: a text of this many words or more, and at most this many
_MIN_WORDS, _MAX_WORDS = 3, 80


def _unspaced(text: str) -> bool:
    return any(0x0E00 <= ord(c) < 0x0F00 or 0x3040 <= ord(c) < 0xA000 for c in text)


def _clean(raw: str) -> str | None:
    text = " ".join(_PLACEHOLDER.sub("", raw).split())
    if _unspaced(text):
        return text if len(text) >= _MIN_CHARS else None
    return text if _MIN_WORDS <= len(text.split()) <= _MAX_WORDS else None


def _lang(name: str, langs: set[str]) -> str | None:
    code = ALIASES.get(name, name)
    return code if code in langs else None


def catalogues(files: Iterator[tuple[str, Path]], source: str) -> Iterator[dict[str, str]]:
    """The translated messages of ``.po`` / ``.mo`` files (``(lang, path)``)."""
    for lang, path in files:
        try:
            cat = polib.mofile(str(path)) if path.suffix == ".mo" else polib.pofile(str(path))
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        for entry in cat:
            if entry.obsolete or "fuzzy" in entry.flags:
                continue
            for raw in [entry.msgstr, *entry.msgstr_plural.values()]:
                text = _clean(raw)
                if text:
                    yield {"lang": lang, "text": text, "source": f"{source} {path.stem}"}


def _django(tree: Path, langs: set[str]) -> Iterator[tuple[str, Path]]:
    package = tree / "django" if (tree / "django").is_dir() else tree  # not the test suite's catalogues
    for po in sorted(package.rglob("LC_MESSAGES/*.po")):
        lang = _lang(po.parent.parent.name, langs)
        if lang:
            yield lang, po


def _mo(root: Path, langs: set[str]) -> Iterator[tuple[str, Path]]:
    for mo in sorted(root.glob("*/LC_MESSAGES/*.mo")):
        lang = _lang(mo.parent.parent.name, langs)
        if lang and not mo.stem.startswith("iso_"):  # country and language names: no sentences
            yield lang, mo


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag in ("p", "li", "dd", "dt", "h1", "h2", "h3", "pre", "br", "div", "td"):
            self.parts.append("\n\n")


def _paragraphs(path: Path) -> list[str]:
    if path.suffix == ".gz":  # a manual page: rendered, one line a paragraph
        source = gzip.decompress(path.read_bytes())
        out = subprocess.run(
            ["groff", "-man", "-Tutf8", "-k", "-rLL=2000n", "-P-cbou"],
            input=source,
            capture_output=True,
            check=False,
            timeout=60,
        ).stdout.decode("utf-8", "replace")
        return [" ".join(p.split()) for p in re.split(r"\n\s*\n", out)]
    parser = _Text()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return [" ".join(p.split()) for p in "".join(parser.parts).split("\n\n")]


def documents(folder: Path, langs: set[str]) -> Iterator[dict[str, str]]:
    """The sentences of the manual pages (``usr/share/man/<lang>/``) and HTML pages
    (``usr/share/doc/**/<lang>/``) of an unpacked package."""
    from ctxassembly.text.injection_model import sentence_bounds

    files = [(p.parts[p.parts.index("man") + 1], p) for p in folder.rglob("usr/share/man/*/man*/*.gz")]
    files += [(p.parent.name, p) for p in folder.rglob("usr/share/doc/**/*.html")]
    for name, path in sorted(files):
        lang = _lang(name.split(".")[0], langs)
        if not lang:
            continue
        for para in _paragraphs(path):
            for s, e in sentence_bounds(para):
                text = _clean(para[s:e])
                if text and not text.startswith(("-", "http")):
                    yield {"lang": lang, "text": text, "source": f"{folder.name.removeprefix('x_')}"}


def _capped(rows: Iterator[dict[str, str]], seed: int) -> list[dict[str, str]]:
    by_lang: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_lang.setdefault(row["lang"], []).append(row)
    rnd = random.Random(seed)
    out = []
    for lang in sorted(by_lang):
        items = by_lang[lang]
        out += items if len(items) <= CAP else rnd.sample(items, CAP)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--django", type=Path, help="an unpacked Django source tree")
    ap.add_argument("--mo", type=Path, help="a locale folder of compiled catalogues (<lang>/LC_MESSAGES/*.mo)")
    ap.add_argument("--doc", type=Path, action="append", default=[], help="an unpacked package of manuals")
    args = ap.parse_args(argv)
    langs = {p.stem for p in LANGS.glob("*.json")} | set(FIRST)
    rows: list[dict[str, str]] = []
    if args.django:
        rows += _capped(catalogues(_django(args.django, langs), "django"), 1)
    if args.mo:
        rows += _capped(catalogues(_mo(args.mo, langs), "locale"), 2)
    for folder in args.doc:
        rows += _capped(documents(folder, langs), 3)
    seen: set[tuple[str, str]] = set()
    rows = [r for r in rows if not ((r["lang"], r["text"]) in seen or seen.add((r["lang"], r["text"])))]  # type: ignore[func-returns-value]
    with lzma.open(OUT, "wt", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    by_lang: dict[str, int] = {}
    for r in rows:
        by_lang[r["lang"]] = by_lang.get(r["lang"], 0) + 1
    print(f"wrote {OUT} ({len(rows)} texts, {OUT.stat().st_size / 1024:.0f} KiB): {dict(sorted(by_lang.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
