"""``hf:PATH``: a sequence-classification model in transformers' format (a directory
``save_pretrained`` wrote), run with torch through transformers' public API:
``AutoTokenizer`` (a fast tokenizer: its ``tokenizers`` backend is batched as for
``onnx:``), ``AutoModelForSequenceClassification`` called directly (no pipeline, whose
defaults change between versions) under ``torch.inference_mode()``, in float32 unless
``dtype`` says float16 or bfloat16 (on a CUDA device only: on a CPU they are refused);
the logits are turned into probabilities in float64 either way.

``device``: ``auto`` (CUDA when torch sees a GPU, else the CPU), ``cpu`` or ``cuda``
(refused when torch sees none). Needs ``pip install "toxeval[hf]"`` (transformers and
torch); nothing is downloaded (``local_files_only``).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toxeval.classifiers.batching import encode, length_batches, prepare_tokenizer
from toxeval.classifiers.extras import require
from toxeval.classifiers.heads import probabilities
from toxeval.classifiers.model_dir import ModelDirError, model_file, read_model_config
from toxeval.classifiers.options import DEFAULT_CPU_BATCH_TOKENS, ModelOptions
from toxeval.files import file_sha256

__all__ = ["HfClassifier"]

#: the files of a transformers model directory whose bytes decide its scores
_WEIGHT_SUFFIXES = (".safetensors", ".bin")
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def _load(transformers: Any, d: Path) -> tuple[Any, Any]:
    """The tokenizer and model of ``d``, read from it only; transformers' progress bar
    and load report are kept off the terminal (its settings are restored after) and
    weights that do not fit the config are one :class:`ModelDirError`: transformers
    would fill a missing or misshapen tensor (a classifier head of another width, or a
    checkpoint saved without one) with random values."""
    log = transformers.utils.logging
    bar, verbosity = log.is_progress_bar_enabled(), log.get_verbosity()
    log.disable_progress_bar()
    log.set_verbosity_error()
    try:
        tok = transformers.AutoTokenizer.from_pretrained(str(d), local_files_only=True)
        model, info = transformers.AutoModelForSequenceClassification.from_pretrained(
            str(d), local_files_only=True, ignore_mismatched_sizes=True, output_loading_info=True
        )
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ModelDirError(f"{d}: transformers cannot load the model: {first}") from None
    finally:
        log.set_verbosity(verbosity)
        if bar:
            log.enable_progress_bar()
    shapes = sorted(
        f"{key} is {list(saved)} in the weights and {list(wanted)} by config.json"
        for key, saved, wanted in info.get("mismatched_keys") or ()
    )
    if shapes:
        raise ModelDirError(
            f"{d}: the weights do not fit config.json ({'; '.join(shapes)}): does id2label "
            "name one label per output of the classifier head?"
        )
    missing = sorted(info.get("missing_keys") or ())
    if missing:
        raise ModelDirError(
            f"{d}: the weights hold no {', '.join(missing)} (transformers would fill them "
            "at random); hf: needs a sequence-classification checkpoint, head included"
        )
    return tok, model


class HfClassifier:
    """A transformers sequence classifier: :meth:`predict` gives label probabilities and
    which texts were truncated; :meth:`fingerprint` identifies its files."""

    def __init__(self, path: str | Path, options: ModelOptions, detector: str) -> None:
        # torch first: transformers decides once, at its import, whether torch is
        # available, and a failed torch import behind it would stick for the process
        torch = require("torch", "hf", detector)
        transformers = require("transformers", "hf", detector)
        self._torch = torch
        d = Path(path)
        self.config = read_model_config(d, options.max_length)
        self.labels = self.config.labels
        self.head = self.config.head
        self.max_length = self.config.max_length
        self.batch_size = options.batch_size
        self.directory = d
        # checked before the weights are read: a wrong option costs no loading time
        self.device = self._device(options.device)
        self.dtype = options.dtype
        if self.dtype != "float32" and self.device.type != "cuda":
            raise ValueError(
                f"--dtype {self.dtype} needs a CUDA device and {detector} runs on the CPU "
                "(--device cuda, or --dtype float32)"
            )
        # transformers would fall back to a slow tokenizer's files or none at all
        model_file(d, "tokenizer.json", "the fast tokenizer hf: runs")
        tok, model = _load(transformers, d)
        if not getattr(tok, "is_fast", False):
            raise ModelDirError(
                f"{d}: the tokenizer is a slow (Python) one; hf: needs a fast tokenizer "
                "(tokenizer.json)"
            )
        n = int(model.config.num_labels)
        if n != len(self.labels):
            raise ModelDirError(
                f"{d}: the model has {n} outputs but config.json's id2label names "
                f"{len(self.labels)} labels"
            )
        # the asked dtype whatever dtype the weights load in (newer transformers: "auto")
        self.model = model.to(getattr(torch, self.dtype)).to(self.device).eval()
        on_cpu = self.device.type == "cpu"
        self.batch_tokens = options.batch_tokens or (DEFAULT_CPU_BATCH_TOKENS if on_cpu else None)
        self.tokenizer = tok.backend_tokenizer
        prepare_tokenizer(self.tokenizer, self.max_length)
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else self.config.pad_id
        params = inspect.signature(self.model.forward).parameters
        self._types = "token_type_ids" in params
        self.runtime = f"transformers {transformers.__version__}, torch {torch.__version__}"
        files = sorted(p for p in d.iterdir() if p.is_file() and p.suffix in _WEIGHT_SUFFIXES)
        files += [d / n for n in ("config.json", *_TOKENIZER_FILES) if (d / n).is_file()]
        self._files = files

    def _device(self, device: str) -> Any:
        cuda = bool(self._torch.cuda.is_available())
        if device == "cuda" and not cuda:
            raise ValueError("--device cuda: torch sees no CUDA device; use --device cpu")
        return self._torch.device(
            "cuda" if device == "cuda" or (device == "auto" and cuda) else "cpu"
        )

    def fingerprint(self) -> dict[str, Any]:
        """sha256 of the weights, config and tokenizer files, the token limit, the head and
        the dtype computed in (not the device: float32 on a CPU or a GPU is one model)."""
        return {
            "files": {p.name: file_sha256(p) for p in self._files},
            "max_length": self.max_length,
            "head": self.head,
            "dtype": self.dtype,
        }

    def logits(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """((n, L) float64 logits, (n,) bool truncated) of ``texts``."""
        torch = self._torch
        enc = encode(self.tokenizer, texts)
        out = np.empty((len(texts), len(self.labels)), dtype=np.float64)
        with torch.inference_mode():
            for batch in length_batches(
                enc, self.batch_size, self.pad_id, batch_tokens=self.batch_tokens
            ):
                feed = {
                    "input_ids": torch.from_numpy(batch.input_ids).to(self.device),
                    "attention_mask": torch.from_numpy(batch.attention_mask).to(self.device),
                }
                if self._types:
                    feed["token_type_ids"] = torch.from_numpy(batch.token_type_ids).to(self.device)
                got = self.model(**feed).logits.float().cpu().numpy()
                out[batch.rows] = got
        return out, enc.truncated

    def predict(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """((n, L) label probabilities, (n,) bool truncated) of ``texts``."""
        logits, truncated = self.logits(texts)
        return probabilities(logits, self.head), truncated
