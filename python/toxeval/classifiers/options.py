"""The options of a local classifier run (``onnx:`` and ``hf:``): the label mapping, the
batch size, the token limit, ONNX Runtime's intra-op threads, the torch device and the
floating-point type ``hf:`` computes in. They
are checked here, once, for the Python API and the command line alike."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["DEFAULT_BATCH_SIZE", "DEFAULT_CPU_BATCH_TOKENS", "Device", "Dtype", "ModelOptions"]

DEFAULT_BATCH_SIZE = 32
#: padded tokens per batch on a CPU (benches/bench_onnx.py: 4 x 256 BERT, 2 cores)
DEFAULT_CPU_BATCH_TOKENS = 512
Device = Literal["auto", "cpu", "cuda"]
Dtype = Literal["float32", "float16", "bfloat16"]


@dataclass(frozen=True)
class ModelOptions:
    """``mapping``: a shipped mapping name or a TOML file (None: the shipped mapping whose
    labels are the model's, or the taxonomy's own ids when the model's labels are
    those). ``batch_size``: texts per forward pass. ``max_length``: tokens kept per text
    (None: the model directory's limit). ``threads``: ONNX Runtime intra-op threads
    (None: its default, one per physical core). ``device``: where ``hf:`` runs.
    ``batch_tokens``: padded tokens per batch at most (None: 512 on a CPU, no limit on a
    GPU). ``dtype``: what ``hf:`` computes in: float32, or float16 / bfloat16 on a CUDA
    device only (refused on a CPU, where half precision is slower and not what the
    scores are checked against)."""

    mapping: str | Path | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    max_length: int | None = None
    threads: int | None = None
    device: Device = "auto"
    batch_tokens: int | None = None
    dtype: Dtype = "float32"

    def __post_init__(self) -> None:
        for name, value, flag, optional in (
            ("batch_size", self.batch_size, "--batch-size", False),
            ("max_length", self.max_length, "--max-length", True),
            ("threads", self.threads, "--threads", True),
            ("batch_tokens", self.batch_tokens, "--batch-tokens", True),
        ):
            if optional and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1 ({flag}), got {value!r}")
        if self.max_length is not None and self.max_length < 2:
            raise ValueError(
                f"max_length must leave room for a token between the special tokens "
                f"(--max-length >= 2), got {self.max_length}"
            )
        if self.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be auto, cpu or cuda (--device), got {self.device!r}")
        if self.dtype not in ("float32", "float16", "bfloat16"):
            raise ValueError(
                f"dtype must be float32, float16 or bfloat16 (--dtype), got {self.dtype!r}"
            )
