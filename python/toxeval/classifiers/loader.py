"""A local classifier as a system of the runner: the model (``onnx:`` or ``hf:``) and its
labels' mapping onto the taxonomy, called on batches of texts by
:func:`toxeval.llm.local.run_local`, which appends each answer to the run file.

Its fingerprint (hence every request hash of the run file) holds the sha256 of the
model's files (weights, tokenizer, config), the token limit, the head, the mapping's
table and the runtime's version: changing any of them scores every row again; the
batch size and thread count do not (padding is masked: a text's scores do not depend on
its batch, up to float rounding).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from toxeval.classifiers.label_map import ColumnMap, column_map
from toxeval.classifiers.options import ModelOptions
from toxeval.llm.local_answers import LocalAnswers
from toxeval.taxonomy import Taxonomy

if TYPE_CHECKING:
    from toxeval.llm.detectors import DetectorSpec

__all__ = ["LocalClassifier", "load_classifier"]


class Classifier(Protocol):
    """What a runtime gives: labels in output order, probabilities and truncation."""

    labels: tuple[str, ...]
    max_length: int
    batch_size: int

    def fingerprint(self) -> dict[str, Any]: ...

    def predict(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]: ...


class LocalClassifier:
    """A loaded model and its :class:`~toxeval.classifiers.label_map.ColumnMap`."""

    def __init__(self, spec: DetectorSpec, model: Classifier, columns: ColumnMap, runtime: str):
        self.spec = spec
        self.model = model
        self.columns = columns
        self.runtime = runtime
        self.known = np.array([bool(src) for src in columns.sources], dtype=bool)
        self.batch_size = model.batch_size

    def fingerprint(self) -> dict[str, Any]:
        """The model's files and settings, the mapping and the runtime (module docstring)."""
        return {
            "model": self.model.fingerprint(),
            "mapping": self.columns.fingerprint(),
            "runtime": self.runtime,
        }

    def __call__(self, texts: list[str]) -> LocalAnswers:
        probs, truncated = self.model.predict(texts)
        scores = self.columns.apply(probs)
        ok = np.isfinite(scores[:, self.known]).all(axis=1)
        scores[~ok] = np.nan
        cut = f"truncated to the model's {self.model.max_length} tokens"
        reasons: list[str | None] = [
            "non-finite model output" if not g else (cut if t else None)
            for g, t in zip(ok.tolist(), truncated.tolist(), strict=True)
        ]
        n = len(texts)
        return LocalAnswers(
            scores=scores,
            statuses=["ok" if g else "unparseable" for g in ok.tolist()],
            reasons=reasons,
            outputs=[None] * n,
            method="scores",
            graded=[True] * n,
            known=self.known,
            truncated=[bool(t) for t in truncated.tolist()],
        )


def load_classifier(
    spec: DetectorSpec, taxonomy: Taxonomy, options: ModelOptions
) -> LocalClassifier:
    """Load the model of an ``onnx:`` or ``hf:`` spec and map its labels onto
    ``taxonomy`` (a ValueError says what is wrong with the directory or the mapping)."""
    path = str(spec.target)
    model: Classifier
    if spec.kind == "onnx":
        from toxeval.classifiers.onnx_runner import OnnxClassifier

        if options.device != "auto" or options.dtype != "float32":
            flag = "--device" if options.device != "auto" else "--dtype"
            raise ValueError(
                f"{flag} applies to hf: detectors; {spec.text!r} runs on ONNX Runtime's CPU"
            )
        model = OnnxClassifier(path, options, spec.text)
        import onnxruntime

        runtime = f"onnxruntime {onnxruntime.__version__}"
    else:
        from toxeval.classifiers.hf_runner import HfClassifier

        if options.threads is not None:
            raise ValueError(
                f"--threads applies to onnx: detectors; for {spec.text!r} torch decides "
                "(torch.set_num_threads, or OMP_NUM_THREADS)"
            )
        hf = HfClassifier(path, options, spec.text)
        model, runtime = hf, hf.runtime
    columns = column_map(model.labels, taxonomy, options.mapping)
    return LocalClassifier(spec, model, columns, runtime)
