"""Fixtures shared by several test modules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest


@pytest.fixture
def masked_dataset() -> Callable[..., Any]:
    """A factory: ``masked_dataset(y, mask)`` is a :class:`toxeval.datasets.Dataset` of
    the (N, K) 0/1 labels ``y`` with ``mask`` (True = known; None = all known) in a
    K-category test taxonomy, rows ``r0..r{N-1}``."""
    from toxeval.datasets import Dataset
    from toxeval.taxonomy import Category, Taxonomy

    def make(y: Any, mask: Any = None) -> Dataset:
        y = np.asarray(y, dtype=np.int8)
        n, k = y.shape
        m = np.ones_like(y, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
        tax = Taxonomy(
            name=f"test-{k}",
            version="1",
            categories=tuple(
                Category(id=f"c{i}", name=f"Category {i}", description=f"test category {i}")
                for i in range(k)
            ),
        )
        return Dataset(
            name="test",
            level="prompt",
            taxonomy=tax,
            ids=[f"r{i}" for i in range(n)],
            texts=[f"text {i}" for i in range(n)],
            responses=None,
            y_true=np.where(m, y, 0).astype(np.int8),
            mask=m,
            soft=None,
            n_annotators=None,
            source="test",
            sha256="0" * 64,
        )

    return make
