"""toxeval: multi-label toxicity evaluation with a Rust engine.

``toxeval.metrics`` is a drop-in for the ranking metrics of ``sklearn.metrics``
(and ``scipy.stats.kendalltau``), computed in parallel native code, with a
``mask=`` keyword for missing labels. The evaluation side (taxonomies, datasets,
prediction dumps, free-text parsing, reports, the ``toxeval`` CLI) is built on it.

The evaluation API (``evaluate``, ``score``, ``load_dataset``, ``parse_output``)
is imported lazily on first use, so ``import toxeval`` and ``toxeval.metrics``
do not pay for pyarrow or rich.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from toxeval._core import __version__

if TYPE_CHECKING:
    from toxeval.datasets import load_dataset
    from toxeval.parsing import parse_output
    from toxeval.scoring import evaluate, score

__all__ = ["__version__", "evaluate", "load_dataset", "parse_output", "score"]

_LAZY = {
    "evaluate": "toxeval.scoring",
    "score": "toxeval.scoring",
    "load_dataset": "toxeval.datasets",
    "parse_output": "toxeval.parsing",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toxeval' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
