"""A pruner through the LlamaIndex postprocessor: the returned nodes carry the pruned text,
verbatim, with their ids; the caller's nodes are not changed."""

from __future__ import annotations

import copy

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from llamaindex_ctxassembly import ContextAssemblyPostprocessor
from tests.test_prune import DOC, pieces, question_words

pytestmark = pytest.mark.unit

Q = "How long is the session cookie age?"


def test_a_callable_pruner_cuts_nodes_verbatim() -> None:
    nodes = [
        NodeWithScore(node=TextNode(id_="a", text=DOC, metadata={"title": "Sessions"}), score=0.9),
        NodeWithScore(node=TextNode(id_="b", text="Paint the fence green. It dries overnight."), score=0.5),
    ]
    before = copy.deepcopy(nodes)
    pp = ContextAssemblyPostprocessor(budget=500, options={"pruner": question_words})
    out = pp.postprocess_nodes(nodes, query_str=Q)
    by_id = {n.node.node_id: n.node for n in out}
    assert by_id["a"].get_content() == (
        "[…]\n\nSession data is stored in the database by default. "
        "The session cookie age defaults to 1209600 seconds.\n\n[…]\n\nThe cookie is signed."
    )
    assert all(p in DOC for p in pieces(by_id["a"].get_content()))
    assert by_id["a"].metadata["title"] == "Sessions"
    assert by_id["b"].get_content() == nodes[1].node.get_content()
    assert [n.node.get_content() for n in nodes] == [n.node.get_content() for n in before]
    notes = [n for n in pp.last_report.notes if n["stage"] == "prune"]
    assert {(n["event"], n["id"]) for n in notes} == {("pruned", "a"), ("nothing_kept", "b")}


def test_a_bad_pruner_option_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="pruner must be a callable"):
        ContextAssemblyPostprocessor(budget=500, options={"pruner": 42})
