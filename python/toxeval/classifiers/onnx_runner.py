"""``onnx:PATH``: a sequence-classification model exported to ONNX (as optimum's
``ORTModelForSequenceClassification`` reads it), run with ONNX Runtime on the CPU and
tokenized with ``tokenizers``; torch is not needed.

``PATH`` is the model directory (holding ``model.onnx``, ``tokenizer.json``,
``config.json``) or the ``.onnx`` file inside it. The graph's inputs must be
``input_ids`` and optionally ``attention_mask`` and ``token_type_ids`` (int64 or int32);
its output ``logits`` (or its only output) has one column per ``id2label`` entry. Texts
are batched by token length (:mod:`toxeval.classifiers.batching`) and the session runs
with ``threads`` intra-op threads (ONNX Runtime's default when None).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toxeval.classifiers.batching import encode, length_batches, prepare_tokenizer
from toxeval.classifiers.extras import require
from toxeval.classifiers.heads import probabilities
from toxeval.classifiers.model_dir import (
    ModelConfig,
    ModelDirError,
    model_file,
    read_model_config,
)
from toxeval.classifiers.options import DEFAULT_CPU_BATCH_TOKENS, ModelOptions
from toxeval.files import file_sha256

__all__ = ["ONNX_INPUTS", "OnnxClassifier", "load_tokenizer"]

ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_DTYPES = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}
#: files beside model.onnx that hold its weights when they are stored outside the graph
_EXTERNAL = ("model.onnx_data", "model.onnx.data")


def load_tokenizer(directory: Path, detector: str) -> Any:
    """``directory/tokenizer.json`` as a ``tokenizers.Tokenizer``."""
    tokenizers = require("tokenizers", "onnx", detector)
    path = model_file(directory, "tokenizer.json", "the tokenizer")
    try:
        return tokenizers.Tokenizer.from_file(str(path))
    except Exception as e:  # tokenizers raises a bare Exception on a malformed file
        raise ModelDirError(f"{path}: not a tokenizers tokenizer.json: {e}") from None


class OnnxClassifier:
    """An ONNX sequence classifier: :meth:`predict` gives label probabilities and which
    texts were truncated. ``labels``, ``head`` and ``max_length`` come from the model
    directory; :meth:`fingerprint` identifies the weights, tokenizer and config."""

    def __init__(self, path: str | Path, options: ModelOptions, detector: str) -> None:
        ort = require("onnxruntime", "onnx", detector)
        p = Path(path)
        directory = p.parent if p.is_file() and p.suffix == ".onnx" else p
        # config.json first: a path that is no model directory says so before anything else
        self.config: ModelConfig = read_model_config(directory, options.max_length)
        graph = p if directory != p else model_file(directory, "model.onnx", "the ONNX graph")
        self.directory = directory
        self.labels = self.config.labels
        self.head = self.config.head
        self.tokenizer = load_tokenizer(directory, detector)
        so = ort.SessionOptions()
        so.intra_op_num_threads = options.threads or 0
        so.inter_op_num_threads = 1
        # no busy-waiting between operators: on a machine whose cores are also busy with
        # other work, spinning intra-op threads halve the throughput (benches/bench_onnx.py);
        # on an idle one batches of 32 keep each operator long enough that waking costs little
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        so.log_severity_level = 3  # errors only: no warnings on stderr under the progress bar
        try:
            self.session = ort.InferenceSession(
                str(graph), sess_options=so, providers=["CPUExecutionProvider"]
            )
        except Exception as e:  # onnxruntime's own exception types (InvalidGraph, ...)
            # a --threads ONNX Runtime cannot start (bad_alloc for a huge count) fails here
            # too: say so rather than blame the graph alone
            threads = f" with {options.threads} threads (--threads)" if options.threads else ""
            raise ModelDirError(f"{graph}: ONNX Runtime cannot load it{threads}: {e}") from None
        self._inputs = self._check_inputs(graph)
        self._output = self._check_output(graph)
        self.batch_size = options.batch_size
        self.batch_tokens = options.batch_tokens or DEFAULT_CPU_BATCH_TOKENS
        self.max_length = self.config.max_length
        seq = self.session.get_inputs()[0].shape
        fixed = seq[1] if len(seq) == 2 and isinstance(seq[1], int) else None
        if fixed is not None:
            self.max_length = min(self.max_length, fixed)
        self._fixed_width = fixed
        if len(seq) == 2 and isinstance(seq[0], int):
            self.batch_size = seq[0]
        prepare_tokenizer(self.tokenizer, self.max_length)
        files = {"graph": graph, "tokenizer": directory / "tokenizer.json"}
        files["config"] = directory / "config.json"
        files.update({n: directory / n for n in _EXTERNAL if (directory / n).is_file()})
        self._files = files

    def _check_inputs(self, graph: Path) -> dict[str, Any]:
        inputs = {i.name: i for i in self.session.get_inputs()}
        unknown = [n for n in inputs if n not in ONNX_INPUTS]
        if "input_ids" not in inputs or unknown:
            raise ModelDirError(
                f"{graph}: the graph's inputs are {', '.join(inputs)}; a sequence classifier "
                f"takes input_ids and optionally attention_mask and token_type_ids"
                + (f" ({', '.join(unknown)} cannot be given)" if unknown else "")
            )
        out = {}
        for name, arg in inputs.items():
            dtype = _DTYPES.get(arg.type)
            if dtype is None:
                raise ModelDirError(f"{graph}: input {name} is {arg.type}; expected int64 or int32")
            if len(arg.shape) != 2:
                raise ModelDirError(
                    f"{graph}: input {name} has rank {len(arg.shape)}; expected (batch, tokens)"
                )
            out[name] = dtype
        return out

    def _check_output(self, graph: Path) -> str:
        outputs = self.session.get_outputs()
        named = [o for o in outputs if o.name == "logits"]
        if not named and len(outputs) != 1:
            raise ModelDirError(
                f"{graph}: no output named logits among {', '.join(o.name for o in outputs)}"
            )
        out = (named or outputs)[0]
        width = out.shape[-1] if out.shape else None
        if len(out.shape) != 2 or (isinstance(width, int) and width != len(self.labels)):
            raise ModelDirError(
                f"{graph}: output {out.name} has shape {out.shape}; config.json's id2label "
                f"names {len(self.labels)} labels, so (batch, {len(self.labels)}) was expected"
            )
        return str(out.name)

    def fingerprint(self) -> dict[str, Any]:
        """sha256 of the graph (and external weights), tokenizer and config, the token
        limit and the head: everything of the model that decides a score."""
        return {
            "files": {k: file_sha256(p) for k, p in sorted(self._files.items())},
            "max_length": self.max_length,
            "head": self.head,
        }

    def logits(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """((n, L) float64 logits, (n,) bool truncated) of ``texts``."""
        enc = encode(self.tokenizer, texts)
        out = np.empty((len(texts), len(self.labels)), dtype=np.float64)
        batches = length_batches(
            enc, self.batch_size, self.config.pad_id, self._fixed_width, self.batch_tokens
        )
        for batch in batches:
            feed = {
                "input_ids": batch.input_ids,
                "attention_mask": batch.attention_mask,
                "token_type_ids": batch.token_type_ids,
            }
            feed = {
                k: v.astype(self._inputs[k], copy=False)
                for k, v in feed.items()
                if k in self._inputs
            }
            try:
                got = np.asarray(self.session.run([self._output], feed)[0])
            except Exception as e:  # onnxruntime's own types (a token id past the embedding)
                raise ModelDirError(
                    f"{self.directory}: ONNX Runtime failed on a batch of "
                    f"{len(batch.rows)} texts: {e}"
                ) from None
            if got.shape != (len(batch.rows), len(self.labels)):
                raise ModelDirError(
                    f"{self.directory}: the model returned logits of shape {got.shape} for "
                    f"{len(batch.rows)} texts; config.json's id2label names "
                    f"{len(self.labels)} labels"
                )
            out[batch.rows] = got
        return out, enc.truncated

    def predict(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """((n, L) label probabilities, (n,) bool truncated) of ``texts``."""
        logits, truncated = self.logits(texts)
        return probabilities(logits, self.head), truncated
