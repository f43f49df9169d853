"""The model-free pipeline with constants of one module set from the environment, to see how
much a measured default matters: every ``NAME=value`` in the environment whose NAME is an
upper-case constant of ``$CTX_MODULE`` (default ``ctxassembly.text.rivals``) replaces it,
with the constant's own type.

    MARGIN=0.8 python ../shared/bench/matrix.py --pipeline benchmarks/sensitivity.py:model_free
    _MIN_WORDS=8 python ../shared/bench/matrix.py --pipeline benchmarks/sensitivity.py:model_free
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from adapters import model_free

__all__ = ["model_free"]

_module = importlib.import_module(os.environ.get("CTX_MODULE", "ctxassembly.text.rivals"))
for _name, _value in vars(_module).copy().items():
    if _name.lstrip("_").isupper() and _name in os.environ and isinstance(_value, (int, float)):
        setattr(_module, _name, type(_value)(os.environ[_name]))
        print(f"sensitivity: {_module.__name__}.{_name} = {getattr(_module, _name)}", file=sys.stderr)
