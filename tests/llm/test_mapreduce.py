"""MapReduce with deterministic LLM test doubles: the detector, the path in the report,
the reduce step's selection and its failures."""

from __future__ import annotations

import json

import pytest

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.llm.mapreduce import MapReduce, aggregate_cue

from .conftest import ScriptedLLMDouble, make_context, notes, prompt_id

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("question", "cue"),
    [
        ("Compare the cache backends", "Compare"),
        ("List all settings that control uploads", "List all"),
        ("How did the default change across versions?", "change across"),
        ("What changed between 4.2 and 5.1 for PBKDF2?", "What changed"),
        ("Differences between 4.2 and 5.2 in MySQL support", "Differences"),
        ("What is the default cache timeout?", None),
        ("Does Django 5.1 still support PostgreSQL 12?", None),
    ],
)
def test_aggregate_cue(question: str, cue: str | None) -> None:
    assert aggregate_cue(question) == cue


def _versions() -> list[Chunk]:
    return [
        Chunk(
            id=f"v{v}",
            text=f"PBKDF2 iterations\n=================\n\nThe default iteration count is {n} in Django {v}.\n"
            "Other hashers are listed in the settings reference with their own options.\n\n"
            "Hashers are classes that turn a password into a string that can be stored in a database. "
            "The first hasher in the list is used to store new passwords, the others to check old ones.",
            version=v,
            index=i,
        )
        for i, (v, n) in enumerate([("4.2", "600,000"), ("5.1", "870,000"), ("5.2", "1,000,000")])
    ]


def _double(reduce_reply: str) -> ScriptedLLMDouble:
    def answer(prompt: str) -> str:
        if prompt.startswith("Below are extracts"):
            return reduce_reply
        cid = prompt_id(prompt)
        sentence = next(line for line in prompt.splitlines() if line.startswith("The default iteration count"))
        return json.dumps({"chunk_id": cid, "evidence": [sentence]})

    return ScriptedLLMDouble({}, default=answer)


def test_aggregate_question_runs_map_then_reduce() -> None:
    llm = _double('{"chunk_ids": ["v5.2", "v4.2", "v9.9"]}')
    ctx = make_context("Compare the PBKDF2 iteration count across versions", budget=100)
    out = MapReduce(llm).run(_versions(), ctx)
    assert [c.id for c in out] == ["v5.2", "v4.2"]  # the reduce's order
    assert all("Other hashers" not in c.text for c in out)  # map extracts, verbatim
    assert notes(ctx, "path")[0]["path"] == "map_reduce"
    assert notes(ctx, "path")[0]["why"] == "aggregate wording 'Compare'"
    assert notes(ctx, "discarded", named="v9.9")  # an id that is no extract: recorded
    assert ctx.report.fate(1).reason == "not_selected"
    assert len(llm.prompts) == 4  # three map calls, one reduce call
    reduce_prompt = llm.prompts[-1]
    assert "[v5.1] (version 5.1)" in reduce_prompt
    assert "Other hashers" not in reduce_prompt  # the reduce reads the short extracts


def test_plain_question_runs_the_extract_path_only() -> None:
    llm = _double("never asked")
    ctx = make_context("What is the PBKDF2 iteration count in Django 5.1?", budget=100)
    out = MapReduce(llm).run(_versions(), ctx)
    assert len(out) == 3
    assert notes(ctx, "path")[0] == {
        "stage": "mapreduce",
        "event": "path",
        "path": "extract",
        "why": "no aggregate wording in the question",
    }
    assert len(llm.prompts) == 3


@pytest.mark.parametrize(("flag", "path"), [(True, "map_reduce"), (False, "extract")])
def test_caller_flag_decides(flag: bool, path: str) -> None:
    ctx = make_context("What is the PBKDF2 iteration count?", budget=100)
    MapReduce(_double('{"chunk_ids": ["v5.1"]}'), aggregate=flag).run(_versions(), ctx)
    assert notes(ctx, "path")[0]["path"] == path
    assert notes(ctx, "path")[0]["why"] == f"caller flag aggregate={flag}"


def test_unparseable_reduce_keeps_every_extract() -> None:
    ctx = make_context("Compare the iteration counts", budget=100)
    out = MapReduce(_double("I think all of them are useful.")).run(_versions(), ctx)
    assert len(out) == 3
    assert notes(ctx, "reduce_unparsed")


def test_failing_reduce_keeps_every_extract() -> None:
    def answer(prompt: str) -> str:
        if prompt.startswith("Below are extracts"):
            raise ConnectionError("provider down")
        return json.dumps({"chunk_id": prompt_id(prompt), "evidence": []})

    ctx = make_context("Compare the iteration counts", budget=100)
    assert len(MapReduce(answer).run(_versions(), ctx)) == 3
    assert notes(ctx, "reduce_failed")[0]["why"] == "ConnectionError: provider down"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"aggregate": "yes"}, "aggregate must be True, False or None"),
        ({"max_extracts": 1}, "max_extracts must be an int >= 2, got 1"),
        ({"reduce_prompt": "{question}"}, r"reduce_prompt must contain \{extracts\}"),
    ],
)
def test_bad_settings_raise(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        MapReduce(lambda p: "", **kwargs)  # type: ignore[arg-type]
