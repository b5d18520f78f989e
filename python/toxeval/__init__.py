"""toxeval: multi-label toxicity evaluation with a Rust engine.

``toxeval.metrics`` is a drop-in for the ranking metrics of ``sklearn.metrics``
(and ``scipy.stats.kendalltau``), computed in parallel native code, with a
``mask=`` keyword for missing labels. The evaluation side (taxonomies, datasets,
prediction dumps, free-text parsing, reports, the ``toxeval`` CLI) is built on it.
"""

from __future__ import annotations

from toxeval._core import __version__

__all__ = ["__version__"]
