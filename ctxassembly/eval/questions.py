"""Labelled questions: what an evaluation knows about the right answer.

The format is the one of the benchmark's ``questions.jsonl``: one JSON object a line
with ``question`` and, all optional, ``qid``, ``target_version``, ``version_explicit``
(whether the user named that version; see :attr:`Question.asked_version`), ``gold`` (ids of the
chunks that answer it), ``answer`` (strings that must all be in the context for the
answer to be derivable), ``wrong`` (strings that answer it for another version or
scope), ``planted_injection_ids`` / ``injection_sentence`` and ``candidates`` (what the
retriever returned, best first).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxassembly.errors import ConfigError
from ctxassembly.jsonl import open_text

__all__ = ["Question", "demo_questions", "load_questions"]


def _strings(data: Mapping[str, Any], name: str, where: str) -> tuple[str, ...]:
    value = data.get(name)
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"question {where}: field {name!r}: expected a list of strings, got {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class Question:
    """One labelled question. Empty tuples mean "not labelled", never "none exist".

    ``target_version`` is the label (the version the answer is right for);
    ``version_explicit`` says whether the question names it. A pipeline under test is
    told the version only when it is explicit (:attr:`asked_version`): a real application
    knows the version only when the user names it, otherwise it must work out "current"
    itself. A record without ``version_explicit`` counts as not explicit.
    """

    question: str
    qid: str = ""
    target_version: str | None = None
    version_explicit: bool = False
    gold: tuple[str, ...] = ()
    answer: tuple[str, ...] = ()
    wrong: tuple[str, ...] = ()
    injection_ids: tuple[str, ...] = ()
    injection_sentences: tuple[str, ...] = ()
    candidates: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)

    @property
    def asked_version(self) -> str | None:
        """The version a fair pipeline is given: ``target_version`` when the question
        names it (``version_explicit``), else ``None``."""
        return self.target_version if self.version_explicit else None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], index: int | None = None) -> Question:
        """Read one record (the benchmark's field names; both injection forms).

        :raises ConfigError: a missing question or a field of the wrong type, naming
            the field and the question.
        """
        if not isinstance(data, Mapping):
            raise ConfigError(f"question at index {index}: expected a mapping, got {type(data).__name__}")
        where = repr(data.get("qid")) if data.get("qid") is not None else f"at index {index}"
        text = data.get("question")
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"question {where}: field 'question': expected a non-empty string, got {text!r}")
        planted = data.get("planted_injection")
        # two forms: planted_injection = [ids], or planted_injection = true + planted_injection_ids
        ids = _strings(data, "planted_injection_ids", where)
        if isinstance(planted, list):
            ids = ids + _strings(data, "planted_injection", where)
        sentences = _strings(data, "injection_sentence", where) + _strings(data, "injection_sentences", where)
        candidates = data.get("candidates") or ()
        if not isinstance(candidates, Sequence) or not all(isinstance(c, Mapping) for c in candidates):
            raise ConfigError(f"question {where}: field 'candidates': expected a list of chunk mappings")
        version = data.get("target_version")
        if version is not None and not isinstance(version, str):
            version = str(version)  # a JSON 5.1 arrives as a float; its string is meant
        explicit = data.get("version_explicit", False)
        if not isinstance(explicit, bool):
            raise ConfigError(f"question {where}: field 'version_explicit': expected true or false, got {explicit!r}")
        return cls(
            question=text,
            qid=str(data.get("qid") if data.get("qid") is not None else (index if index is not None else "")),
            target_version=version,
            version_explicit=explicit,
            gold=_strings(data, "gold", where),
            answer=_strings(data, "answer", where),
            wrong=_strings(data, "wrong", where),
            injection_ids=ids,
            injection_sentences=sentences,
            candidates=tuple(dict(c) for c in candidates),
        )


def load_questions(path: str | Path, limit: int | None = None) -> list[Question]:
    """Read a JSONL file of labelled questions (blank lines skipped; ``.gz`` / ``.xz`` read directly).

    :raises ConfigError: a line that is not JSON or not a valid question (with its line).
    """
    out: list[Question] = []
    with open_text(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as e:
                raise ConfigError(f"{path}:{n}: not JSON: {e}") from None
            out.append(Question.from_dict(data, index=len(out)))
            if limit is not None and len(out) >= limit:
                break
    return out


def demo_questions(k: int = 40, items: Iterable[Sequence[Any]] | None = None) -> list[Question]:
    """Labelled questions over the bundled Django demo corpus.

    ``items`` (default: ``ctxassembly.data.SAMPLE_QUESTIONS``) are ``(question, answer)``
    or ``(question, answer, wrong_answers)``. Each question comes with the demo
    retriever's top ``k``; its gold chunks are the candidates that contain the answer
    string in the version the question names (the latest, 5.2, when it names none;
    ``version_explicit`` is true only when it names one).
    """
    import re

    from ctxassembly.data import SAMPLE_QUESTIONS, retriever

    out = []
    for i, item in enumerate(SAMPLE_QUESTIONS if items is None else items):
        text, answer = item[0], item[1]
        wrong = tuple(item[2]) if len(item) > 2 else ()
        m = re.search(r"Django (\d+\.\d+)", text)
        version = m.group(1) if m else "5.2"
        candidates = retriever().retrieve(text, k=k)
        gold = tuple(dict.fromkeys(c["id"] for c in candidates if answer in c["text"] and c.get("version") == version))
        out.append(
            Question(
                question=text,
                qid=f"demo-{i + 1:02d}",
                target_version=version,
                version_explicit=m is not None,
                gold=gold,
                answer=(answer,),
                wrong=wrong,
                candidates=tuple(candidates),
            )
        )
    return out
