"""Fixtures of the batch tests: the benchmark's dev questions (the shared local Ray is in
tests/conftest.py)."""

from __future__ import annotations

import pytest

from ctxassembly.eval.questions import Question, load_questions
from tests.conftest import DevData


@pytest.fixture(scope="session")
def dev_questions(dev_data: DevData) -> list[Question]:
    return load_questions(dev_data.path("django"))
