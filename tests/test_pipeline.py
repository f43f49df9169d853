"""The pipeline contract: stages, traits, the typed context, the cascade and the final fit."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ctxassembly import Assembler, ConfigError
from ctxassembly.chunk import Chunk
from ctxassembly.kinds import Reason
from ctxassembly.pipeline import Context, Selection, StageBase, fit_rendered, run, traits
from ctxassembly.render import Renderer
from ctxassembly.stages import Horizon, Rerank, Select
from tests.conftest import chunks, context

pytestmark = pytest.mark.unit


class Keep:
    """A custom stage with only a name and run: no StageBase."""

    name = "keep"

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        return chunks


class DropOdd(StageBase):
    name = "drop_odd"
    reserve = 15

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        for c in chunks[1::2]:
            ctx.report.drop(c, self.name, Reason.OVER_BUDGET)
        return chunks[::2]


def test_traits_read_what_a_stage_declares_and_default_for_plain_stages() -> None:
    assert traits(Keep()) == (0, False)
    assert traits(DropOdd()) == (15, False)
    assert traits(Select(reserve=30)) == (30, False)
    assert traits(Rerank(lambda q, texts: [0.0] * len(texts))) == (0, True)


def test_a_custom_stage_with_only_name_and_run_runs_in_an_assembler() -> None:
    result = Assembler(stages=[Keep(), DropOdd()]).run(
        "q", [{"id": f"c{i}", "text": f"t{i}"} for i in range(4)], budget=100
    )
    assert [c.id for c in result.chunks] == ["c0", "c2"]
    assert [d.reason for d in result.report.decisions] == ["kept", "over_budget", "kept", "over_budget"]
    assert result.report.stage_counts == {"keep": {"in": 4, "out": 4}, "drop_odd": {"in": 4, "out": 2}}


class SettleOnce(StageBase):
    """A custom settling stage: its first pass is rolled back once, the second stands."""

    name = "settle_once"

    def __init__(self, *, with_begin: bool = True) -> None:
        self.passes = 0
        if not with_begin:
            self.begin = None  # type: ignore[assignment]  # an unsettled stage without begin

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        self.passes += 1
        return chunks

    def begin(self, ctx: Context) -> dict[str, object]:
        return {}

    def unsettled(self, out: list[Chunk], ctx: Context) -> dict[str, object] | None:
        return {"widened": ctx.ledger.call.widened + 1} if self.passes == 1 else None


def test_a_custom_settling_stage_runs_again_and_one_without_begin_is_named() -> None:
    candidates = [{"id": f"c{i}", "text": f"t{i}"} for i in range(4)]
    stage = SettleOnce()
    result = Assembler(stages=[stage, Keep()]).run("q", candidates, budget=100)
    assert stage.passes == 2
    assert [c.id for c in result.chunks] == ["c0", "c1", "c2", "c3"]
    with pytest.raises(ConfigError, match=r"stage 'settle_once' has unsettled\(out, ctx\) but no begin\(ctx\)"):
        Assembler(stages=[SettleOnce(with_begin=False), Keep()]).run("q", candidates, budget=100)


def test_the_stage_reserve_is_kept_back_in_the_final_fit() -> None:
    text = "word " * 40
    items = [{"id": "a", "text": text}]
    assert Assembler(stages=[Keep()]).run("q", items, budget=60).chunks
    assert (
        not Assembler(stages=[Keep(), DropOdd()]).run("q", items, budget=60).chunks
    )  # rendered 50 tokens; 60 - 15 is too few


def test_a_plain_callable_counter_is_wrapped_without_a_lower_bound() -> None:
    ctx = Context(question="q", budget=10, report=context().report, count_tokens=len)
    assert ctx.count_tokens("abc") == 3
    assert ctx.count_tokens.lower_bound is None


def test_the_cascade_widens_and_rolls_back_the_starved_pass() -> None:
    # 60 chunks of ~25 tokens, every second one dropped by the stage after the horizon:
    # a head of 20 chunks leaves select starved, so the horizon doubles once
    cs = chunks(*[(f"c{i}", f"chunk {i} " + "lorem " * 20) for i in range(60)])
    ctx = context(budget=400)
    out = run([Horizon(1.0, min_chunks=20), DropOdd(), Select()], cs, ctx)
    assert ctx.ledger.call.widened >= 1
    selection = ctx.ledger.call.selection
    assert isinstance(selection, Selection)
    assert selection.available == 400
    assert selection.overflow > 0  # the last pass was stopped by the budget, not by a dry head
    horizon_notes = [n for n in ctx.report.notes if n["event"] == "cut"]
    assert [n["widened"] for n in horizon_notes] == [ctx.ledger.call.widened]  # the starved pass's note is gone
    ctx.report.finish(out, len(cs))  # every chunk has exactly one fate after the rollback
    assert {d.reason for d in ctx.report.decisions} <= {"kept", "beyond_horizon", "over_budget"}


def test_fit_rendered_drops_the_lowest_ranked_until_the_text_fits() -> None:
    cs = chunks(("a", "x " * 30), ("b", "y " * 30))
    ctx = context(budget=50)
    for c, r in zip(cs, (1, 0), strict=True):
        ctx.ledger.update(c.index, rank=r)
    renderer = Renderer("plain")
    final, text, tokens = fit_rendered(cs, ctx, renderer.render_parts, 50)
    assert [c.id for c in final] == ["b"]
    assert tokens == ctx.count_tokens(text) <= 50
    assert ctx.report.mark().fates == frozenset({0})


def test_a_stage_base_without_run_is_refused_when_the_assembler_is_built() -> None:
    class Forgotten(StageBase):
        name = "forgotten"

    with pytest.raises(ConfigError, match="has no name and run"):
        Assembler(stages=[Forgotten()])


class WritesUndeclared(StageBase):
    name = "writes_undeclared"
    writes = frozenset({"rank"})

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        for c in chunks:
            ctx.ledger.update(c.index, duplicates=("x",))
        return chunks


class DeclaresNonsense(StageBase):
    name = "nonsense"
    reads = frozenset({"relevance_rnak"})

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        return chunks


def test_a_stage_declares_what_it_reads_and_writes_of_the_ledger() -> None:
    with pytest.raises(ConfigError, match=r"stage 'nonsense' declares unknown ledger facts \['relevance_rnak'\]"):
        Assembler(stages=[DeclaresNonsense()])
    with pytest.raises(RuntimeError, match=r"stage 'writes_undeclared' writes \['duplicates'\] but declares"):
        Assembler(stages=[WritesUndeclared()]).run("q", [{"id": "a", "text": "x"}], budget=100)


def test_the_context_is_frozen_and_the_built_in_stages_declare_known_facts() -> None:
    from dataclasses import FrozenInstanceError

    from ctxassembly.options import Options
    from ctxassembly.pipeline import check_declared

    ctx = context()
    with pytest.raises(FrozenInstanceError):
        ctx.target_version = "5.1"  # type: ignore[misc]
    for options in (Options(), Options(extract=True), Options(reranker=lambda q, ts: [0.0] * len(ts))):
        check_declared(options.build_stages())


def test_the_report_rejects_a_reason_outside_the_closed_set() -> None:
    ctx = context()
    c = chunks(("a", "x"))[0]
    with pytest.raises(ConfigError, match=r"reason must be one of \('kept', 'invalid'.*got 'odd'"):
        ctx.report.drop(c, "s", "odd")
    ctx.report.drop(c, "s", "duplicate")  # a reason's string is parsed to the Reason
    assert ctx.report.fate(0).reason is Reason.DUPLICATE
    assert ctx.report.fate(0).to_dict()["reason"] == "duplicate"


def test_the_readme_table_of_reads_and_writes_is_what_the_stages_declare() -> None:
    from pathlib import Path

    from ctxassembly.llm import LLMExtract, MapReduce, Summarize
    from ctxassembly.options import Options
    from ctxassembly.stages import SemanticDedup

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| stage | reads | writes |") :].split("\n\n", 1)[0].splitlines()[2:]
    rows = {}
    for line in table:
        names, reads, writes = (cell.strip() for cell in line.strip("|").split("|"))
        for name in names.split(", "):
            rows[name.strip("`")] = ({*re.findall(r"`(\w+)`", reads)}, {*re.findall(r"`(\w+)`", writes)})
    stages: list[Any] = [*Options(extract=True, reranker=lambda q, ts: [0.0] * len(ts)).build_stages()]
    stages += [s for s in Options().build_stages() if s.name == "excerpt"]
    stages += [SemanticDedup, LLMExtract, MapReduce, Summarize]
    declared = {s.name: (set(s.reads), set(s.writes)) for s in stages}
    assert {name: (r, {w for w in writes if w != "conflicting"}) for name, (r, writes) in rows.items()} == declared


def test_a_fact_update_replaces_named_fields_and_refuses_unknown_names() -> None:
    from ctxassembly.ledger import Facts, Ledger

    ledger = Ledger()
    ledger.update(3, rank=2, flags=("override",))
    ledger.update(3, rank=0)
    assert ledger[3] == Facts(rank=0, flags=("override",))
    assert ledger[4] == Facts()
    with pytest.raises(TypeError, match=r"Facts has no field\(s\) \['rnak'\]"):
        ledger.update(3, rnak=1)
