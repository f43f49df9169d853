"""A new user's app (issue 29): three releases of a small project's docs on disk (reST,
Markdown and a ``CHANGES.rst`` that covers every release so far), loaded and split by the
real LangChain and LlamaIndex components a user reaches for first.

The project ("tally", a command-line toolkit) is made up; its layout is the common one:
one folder per release, ``docs/`` with reST and Markdown pages, and the changelog at the
top with one section per version under a ``Version X.Y.Z`` heading and a ``Released``
line, newest first.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

RELEASES = ("7.1.2", "8.1.7", "8.2.1")

#: (version, released, entries) newest first: what CHANGES.rst of the newest release holds
CHANGELOG = (
    (
        "8.2.1",
        "2025-05-20",
        ["Fix the help text of a flag with a secondary name being cut in the middle."],
    ),
    (
        "8.2.0",
        "2025-05-10",
        [
            "The runner's result always captures standard error separately: read it as "
            "``result.stderr``, and ``result.output`` holds both streams as the user saw them. "
            "The ``mix_stderr`` parameter is removed.",
            "Drop support for Python 3.7 and 3.8.",
        ],
    ),
    (
        "8.1.7",
        "2023-08-17",
        ["Fix a shell completion issue with a group that has a default command."],
    ),
    (
        "8.0.0",
        "2021-05-11",
        ["Rewrite shell completion: a command's completions come from its parameters' types."],
    ),
    (
        "7.1.2",
        "2020-04-27",
        ["Revert applying shell quoting to commands for the pager on Windows."],
    ),
    (
        "7.0",
        "2018-09-25",
        [
            "The runner gains the ``mix_stderr`` parameter: pass ``mix_stderr=False`` to capture "
            "standard error separately from standard output.",
            "Add a progress bar for iterables without a length.",
        ],
    ),
)


def changes_rst(release: str) -> str:
    """CHANGES.rst as the ``release`` sdist ships it: every section up to ``release``."""
    order = [v for v, _, _ in CHANGELOG]
    lines = [".. currentmodule:: tally", ""]
    for version, released, entries in CHANGELOG[order.index(release) :]:
        heading = f"Version {version}"
        lines += [heading, "-" * len(heading), "", f"Released {released}", ""]
        lines += [f"-   {e}" for e in entries]
        lines.append("")
    return "\n".join(lines)


def testing_rst(release: str) -> str:
    if release.startswith("7"):
        stderr = (
            "By default the result's ``output`` holds standard output and standard error mixed. "
            "Pass ``mix_stderr=False`` to the runner to read ``result.stderr`` on its own."
        )
    else:
        stderr = "The result's ``stderr`` attribute holds standard error; ``output`` holds both streams."
    return (
        "Testing Tally Applications\n"
        "==========================\n\n"
        "The runner invokes a command as a script would and returns a result.\n\n"
        "Basic Testing\n"
        "-------------\n\n"
        "Call ``runner.invoke(command, args)``; the result has ``exit_code`` and ``output``.\n\n"
        "Reading Standard Error\n"
        "----------------------\n\n"
        f"{stderr}\n"
    )


def options_md(release: str) -> str:
    default = "a lowercase name" if release.startswith("7") else "the parameter's name"
    return (
        "# Options\n\n"
        "Options are parameters a user passes by name.\n\n"
        "## Naming\n\n"
        f"An option's destination is {default} unless the decorator gives one.\n\n"
        "## Multiple Values\n\n"
        "Set `multiple=True` to collect every occurrence into a tuple.\n\n"
        "### Defaults\n\n"
        "A multiple option's default is an empty tuple.\n"
    )


def write_project(root: Path) -> Path:
    """The three releases' docs under ``root/tally-<version>/`` (returns ``root``)."""
    for release in RELEASES:
        docs = root / f"tally-{release}" / "docs"
        docs.mkdir(parents=True)
        (docs / "testing.rst").write_text(testing_rst(release))
        (docs / "options.md").write_text(options_md(release))
        (docs.parent / "CHANGES.rst").write_text(changes_rst(release))
    return root


def load_langchain(root: Path, glob: str = "**/*.*") -> list[Any]:
    """LangChain's DirectoryLoader + TextLoader over ``root`` (Documents with ``source``)."""
    with warnings.catch_warnings():
        # langchain-community warns on import that it is being sunset; its loaders are still
        # what a LangChain user loads files with
        warnings.filterwarnings("ignore", message="`langchain-community` is being sunset", category=DeprecationWarning)
        from langchain_community.document_loaders import DirectoryLoader, TextLoader

    return DirectoryLoader(str(root), glob=glob, loader_cls=TextLoader).load()


def split_langchain(documents: list[Any], chunk_size: int = 400) -> list[Any]:
    """Markdown through MarkdownHeaderTextSplitter (headings into ``Header 1``...), then
    every document through RecursiveCharacterTextSplitter, as the LangChain docs show."""
    from langchain_core.documents import Document
    from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

    headers = [("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")]
    markdown = MarkdownHeaderTextSplitter(headers_to_split_on=headers)
    staged = []
    for doc in documents:
        if doc.metadata["source"].endswith(".md"):
            for part in markdown.split_text(doc.page_content):
                staged.append(Document(page_content=part.page_content, metadata={**doc.metadata, **part.metadata}))
        else:
            staged.append(doc)
    splitter = RecursiveCharacterTextSplitter(chunk_size=chunk_size, chunk_overlap=0, add_start_index=True)
    return splitter.split_documents(staged)


def load_llamaindex(root: Path) -> list[Any]:
    """LlamaIndex's SimpleDirectoryReader over ``root``: Markdown through MarkdownNodeParser
    (its ``header_path``), the rest through SentenceSplitter."""
    from llama_index.core import SimpleDirectoryReader
    from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter

    documents = SimpleDirectoryReader(str(root), recursive=True).load_data()
    markdown = [d for d in documents if d.metadata["file_path"].endswith(".md")]
    other = [d for d in documents if not d.metadata["file_path"].endswith(".md")]
    nodes = MarkdownNodeParser().get_nodes_from_documents(markdown)
    return nodes + SentenceSplitter(chunk_size=160, chunk_overlap=0).get_nodes_from_documents(other)
