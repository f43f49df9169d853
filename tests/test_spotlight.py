"""Spotlighting: the documents' text marked (a datamark drawn per call, or base64), the
prompt saying what the marking means, in every format and both adapters."""

from __future__ import annotations

import base64

import pytest
from langchain_core.documents import Document
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

from ctxassembly import Assembler, assemble
from ctxassembly.errors import ConfigError
from ctxassembly.render import FORMATS, MARKERS, Renderer, Spotlight, parse
from ctxassembly.tokens import get_counter
from langchain_ctxassembly import ContextAssemblyCompressor
from langchain_ctxassembly.chains import assemble_step
from langchain_ctxassembly.render import format_documents
from llamaindex_ctxassembly import ContextAssemblyPostprocessor
from llamaindex_ctxassembly.postprocessor import SPOTLIGHT_KEY
from tests.conftest import chunks

pytestmark = pytest.mark.unit

Q = "What is the cache timeout?"
TEXTS = ["The default cache timeout is 300 seconds.", "Set   CACHES in the settings\tmodule to change it."]


def _chunks():
    return chunks(*({"id": f"c{i}", "text": t, "title": "Cache", "score": 1.0 - i / 10} for i, t in enumerate(TEXTS)))


@pytest.mark.parametrize("fmt", FORMATS)
def test_datamarking_replaces_every_space_run_of_the_text_and_leaves_the_labels(fmt):
    out = assemble(Q, _chunks(), budget=300, format=fmt, spotlight="datamark")
    marker = out.spotlight.marker
    assert marker in MARKERS
    assert f"The{marker}default{marker}cache{marker}timeout{marker}is{marker}300{marker}seconds." in out.text
    assert f"Set{marker}CACHES{marker}in" in out.text  # a run of spaces is one marker
    assert "The default cache" not in out.text
    if fmt == "xml":
        assert '<document id="1" title="Cache"' in out.text
        assert [d["title"] for d in parse(out.text)] == ["Cache", "Cache"]
    assert f"symbol {marker} in place of every space" in out.prompt()


@pytest.mark.parametrize("fmt", FORMATS)
def test_base64_encodes_each_text(fmt):
    out = assemble(Q, _chunks(), budget=400, format=fmt, spotlight="base64")
    encoded = base64.b64encode(TEXTS[0].encode()).decode()
    assert encoded in out.text
    assert TEXTS[0] not in out.text
    assert "encoded in base64" in out.prompt()


def test_each_call_draws_its_marker():
    assembler = Assembler(spotlight="datamark")
    markers = {assembler.run(Q, _chunks(), budget=300).spotlight.marker for _ in range(40)}
    assert len(markers) > 1


@pytest.mark.parametrize("mode", ["datamark", "base64"])
def test_the_budget_holds_on_the_marked_text(mode):
    many = chunks(*({"id": f"c{i}", "text": f"{TEXTS[0]} Item {i} of the list." * 5, "score": 1.0} for i in range(30)))
    out = assemble(Q, many, budget=600, spotlight=mode)
    assert len(out.chunks) < len(many)
    assert 0 < get_counter()(out.text) <= 600


def test_without_spotlighting_nothing_changes():
    out = assemble(Q, _chunks(), budget=300)
    assert out.spotlight is None
    assert TEXTS[0] in out.text
    assert "in place of every space" not in out.prompt()


def test_a_bad_mode_is_an_error():
    with pytest.raises(ConfigError, match=r"spotlight must be one of \('datamark', 'base64'\), got 'bold'"):
        assemble(Q, _chunks(), budget=300, spotlight="bold")
    with pytest.raises(ConfigError, match=r"spotlight must be one of \('datamark', 'base64'\) or None, got 'x'"):
        Renderer("xml", "x")  # type: ignore[arg-type]


def test_a_spotlight_marks_as_given():
    spot = Spotlight("datamark", "¤")
    assert spot.mark("a  b\tc\nd") == "a¤b¤c\nd"
    assert "¤" in spot.note()


def test_langchain_chain_step_marks_the_context_and_says_so():
    comp = ContextAssemblyCompressor(budget=300, options={"spotlight": "datamark"})
    docs = [Document(page_content=t, metadata={"title": "Cache"}) for t in TEXTS]
    out = assemble_step(comp).invoke({"question": Q, "documents": docs})
    marker = comp.assemble(docs, Q).spotlight.marker
    assert "The default cache" not in out["context"]
    assert "in place of every space" in out["instructions"]
    assert marker in MARKERS
    rendered = format_documents(out["documents"], spotlight=Spotlight("datamark", "¤"))
    assert "The¤default¤cache" in rendered


def test_langchain_without_spotlighting_keeps_its_instructions():
    comp = ContextAssemblyCompressor(budget=300)
    out = assemble_step(comp).invoke({"question": Q, "documents": [Document(page_content=TEXTS[0])]})
    assert "instructions" not in out


def test_llamaindex_nodes_carry_the_marked_text_and_one_note():
    pp = ContextAssemblyPostprocessor(budget=300, options={"spotlight": "datamark"})
    nodes = [
        NodeWithScore(node=TextNode(id_=f"n{i}", text=t, metadata={"title": "Cache"}), score=1.0)
        for i, t in enumerate(TEXTS)
    ]
    out = pp.postprocess_nodes(nodes, query_str=Q)
    view = "\n\n".join(n.node.get_content(metadata_mode=MetadataMode.LLM) for n in out)
    assert view.count(f"{SPOTLIGHT_KEY}:") == 1
    assert "in place of every space" in view
    assert "The default cache" not in view
    assert nodes[0].node.text == TEXTS[0]  # the caller's node is untouched
