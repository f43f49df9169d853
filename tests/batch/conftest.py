"""Fixtures of the batch tests: the benchmark's dev questions, and one local Ray with 2 CPUs
for the whole session (starting Ray takes seconds; every Ray test shares it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ctxassembly.eval.questions import Question, load_questions
from tests.conftest import DevData


@pytest.fixture(scope="session")
def dev_questions(dev_data: DevData) -> list[Question]:
    return load_questions(dev_data.path("django"))


@pytest.fixture(scope="session")
def local_ray() -> Iterator[Any]:
    import ray  # the ray extra is part of 'all': a missing Ray is a failure, not a skip

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()
