"""Texts to model inputs: tokenized once (``tokenizers``, in Rust, on its own threads),
cut to the model's token limit (each cut row counted), sorted by token length and split
into batches padded to the longest text of each batch, so a batch of short texts does not
pay for one long text elsewhere. A batch also holds at most ``batch_tokens`` padded
tokens: on a CPU, a batch of 32 long texts is slower per text than smaller ones (its
activations leave the cache), and the padding of the longest lengths is larger.

A text is cut as the tokenizer's own truncation cuts it (the special tokens kept); it is
truncated when the tokenizer had tokens left over (``Encoding.overflowing``).
Padding cells carry the padding id and attention mask 0, so a text's scores do not depend
on the batch it lands in (up to float rounding in the runtime).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Batch", "Encoded", "encode", "length_batches"]


@dataclass(frozen=True)
class Encoded:
    """Token ids, type ids, per-text lengths and whether each text was truncated."""

    ids: list[list[int]]
    type_ids: list[list[int]]
    lengths: np.ndarray
    truncated: np.ndarray


@dataclass(frozen=True)
class Batch:
    """``rows``: the positions of its texts in the input; ``input_ids``,
    ``attention_mask`` and ``token_type_ids``: (b, T) int64, T its longest text."""

    rows: np.ndarray
    input_ids: np.ndarray
    attention_mask: np.ndarray
    token_type_ids: np.ndarray


def prepare_tokenizer(tokenizer: Any, max_length: int) -> None:
    """Set ``tokenizer`` (a ``tokenizers.Tokenizer``) to cut at ``max_length`` tokens and
    not pad (padding is done per batch here)."""
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length)


def encode(tokenizer: Any, texts: Sequence[str]) -> Encoded:
    """Tokenize ``texts`` with a tokenizer set by :func:`prepare_tokenizer`."""
    encs = tokenizer.encode_batch(list(texts))
    ids = [e.ids for e in encs]
    return Encoded(
        ids=ids,
        type_ids=[e.type_ids for e in encs],
        lengths=np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(ids)),
        truncated=np.fromiter((bool(e.overflowing) for e in encs), dtype=bool, count=len(ids)),
    )


def _groups(lengths: np.ndarray, batch_size: int, batch_tokens: int | None) -> Iterator[np.ndarray]:
    """Row groups in order of token length: at most ``batch_size`` rows and, when
    ``batch_tokens`` is set, at most that many padded tokens (one row always fits)."""
    order = np.argsort(lengths, kind="stable")
    start = 0
    while start < len(order):
        end = min(start + batch_size, len(order))
        if batch_tokens is not None:
            # sorted: the padded size of rows start..j is (j - start + 1) * lengths[j]
            widths = np.maximum(lengths[order[start:end]], 1)
            fits = (np.arange(1, end - start + 1) * widths) <= batch_tokens
            end = start + max(1, int(np.argmin(fits)) if not fits.all() else end - start)
        yield order[start:end]
        start = end


def length_batches(
    enc: Encoded,
    batch_size: int,
    pad_id: int,
    fixed_width: int | None = None,
    batch_tokens: int | None = None,
) -> Iterator[Batch]:
    """Batches of at most ``batch_size`` texts of neighbouring token lengths (and at most
    ``batch_tokens`` padded tokens, when given), each padded to its longest text (a text
    of no tokens gets one padding token, masked), or to ``fixed_width`` for a graph whose
    token axis has a fixed size."""
    for rows in _groups(enc.lengths, batch_size, None if fixed_width else batch_tokens):
        width = fixed_width or max(1, int(enc.lengths[rows].max()))
        ids = np.full((len(rows), width), pad_id, dtype=np.int64)
        types = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, i in enumerate(rows):
            n = int(enc.lengths[i])
            ids[r, :n] = enc.ids[i]
            types[r, :n] = enc.type_ids[i]
            mask[r, :n] = 1
        yield Batch(rows=rows, input_ids=ids, attention_mask=mask, token_type_ids=types)
